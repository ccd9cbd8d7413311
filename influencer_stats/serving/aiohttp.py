"""aiohttp.web's runner, on uvloop when it is installed."""

from __future__ import annotations

import asyncio

from aiohttp import web

from influencer_stats.config.settings import Settings


def run(settings: Settings, app: web.Application) -> None:
    """Serve an aiohttp application; its cleanup context opens and closes the API."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is optional
        pass
    else:
        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    web.run_app(
        app,
        host=settings.host,
        port=settings.port,
        access_log=None,
        print=None,
        shutdown_timeout=settings.graceful_shutdown_s,
        keepalive_timeout=settings.keepalive_s,
        backlog=settings.backlog,
    )
