"""uvicorn, for the ASGI servers (``starlette``, ``asgi``)."""

from __future__ import annotations

from typing import Any

import uvicorn

from influencer_stats.config.settings import Settings


def run(settings: Settings, app: Any) -> None:
    """Serve an ASGI app: JSON logs only (no access log), no ``server`` header."""
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        lifespan="on",
        access_log=False,
        log_level="warning",
        server_header=False,
        timeout_keep_alive=int(settings.keepalive_s),
        timeout_graceful_shutdown=int(settings.graceful_shutdown_s),
        limit_concurrency=settings.limit_concurrency,
        backlog=settings.backlog,
    )
