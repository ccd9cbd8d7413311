"""The ``aiohttp`` server: the API on aiohttp.web (``app``), its runner (``runner``), one ``SERVER``."""

from __future__ import annotations

from influencer_stats.servers.aiohttp.app import app, lifespan
from influencer_stats.servers.aiohttp.runner import run
from influencer_stats.serving.server import Server

# aiohttp's parser refuses a head too large, or with too many fields, with a plain 400.
SERVER = Server(
    app=app, run=run, lifespan=lifespan, runner="aiohttp", too_large_headers=400, too_many_headers=400
)
