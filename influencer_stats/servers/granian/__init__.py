"""The ``granian`` server: the API through RSGI (``app``), Granian's runner (``runner``), one ``SERVER``."""

from __future__ import annotations

from influencer_stats.servers.granian.app import app
from influencer_stats.servers.granian.runner import run
from influencer_stats.serving.server import Server

SERVER = Server(app=app, run=run)
