"""The ``granian`` server: the API through RSGI (``app``), Granian's runner (``runner``), one ``SERVER``."""

from __future__ import annotations

from influencer_stats.servers.granian.app import app, lifespan
from influencer_stats.servers.granian.runner import run
from influencer_stats.serving.server import Server

# RSGI's scope holds only the decoded path; Granian counts no header fields (its buffer bounds them).
SERVER = Server(app=app, run=run, lifespan=lifespan, runner="granian", raw_path=False, too_many_headers=None)
