"""The ``aiohttp`` server: the API on aiohttp.web (``app``), its runner (``runner``), one ``SERVER``."""

from __future__ import annotations

from influencer_stats.servers.aiohttp.app import app
from influencer_stats.servers.aiohttp.runner import run
from influencer_stats.serving.server import Server

SERVER = Server(app=app, run=run)
