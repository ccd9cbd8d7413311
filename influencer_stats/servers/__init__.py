"""Servers: one room each, above the composition root; ``serve`` runs the chosen one.

Each ``influencer_stats.servers.<name>`` holds everything that makes that
server: its adapter (its framework's app around ``HttpApi``), its runner, and
a ``SERVER`` record (``serving.server.Server``). ``bootstrap.servers`` names
the module; what every server shares (address, what a runner asks of several workers,
the uvicorn runner) is in ``influencer_stats.serving``, below. A new server is a module
here plus one entry there.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.serving.environment import export, metrics_directory
from influencer_stats.serving.server import Server, app_around
from influencer_stats.settings import Settings


def server(name: str) -> Server:
    """The server registered as ``name`` (its module imported now)."""
    module = SLOTS["server"].registry[name].build
    found = import_module(module).SERVER
    assert isinstance(found, Server), f"{module}.SERVER is not a Server"
    return found


def app_for(settings: Settings) -> Any:
    """The chosen server's application around the API of ``settings``."""
    return app_around(settings, server(settings.choices.one("server")).app)


def serve(settings: Settings) -> None:
    """Run the chosen server until SIGINT/SIGTERM."""
    with metrics_directory(settings) as settings:
        export(settings)  # for worker processes
        server(settings.choices.one("server")).run(settings)
