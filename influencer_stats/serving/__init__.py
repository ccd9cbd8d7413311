"""Serving: run the configured server with the API until SIGINT/SIGTERM.

The composition root (``influencer_stats.bootstrap``) builds; the runners
here only start servers (uvicorn, aiohttp.web, Granian) with the settings,
in this process or in ``settings.workers`` worker processes, which build
their app from the environment (``serving.environment``).
"""

from __future__ import annotations

from typing import Any

from influencer_stats.bootstrap.root import open_api
from influencer_stats.bootstrap.servers import SERVERS
from influencer_stats.settings import Settings


def app_for(settings: Settings) -> Any:
    """The chosen server's application around the API of ``settings``."""
    return SERVERS[settings.choices.one("server")].build.app(lambda: open_api(settings), settings)


def serve(settings: Settings) -> None:
    """Run the configured server until SIGINT/SIGTERM."""
    from influencer_stats.serving.environment import export, metrics_directory

    with metrics_directory(settings) as settings:
        export(settings)  # for worker processes
        SERVERS[settings.choices.one("server")].build.run(settings)
