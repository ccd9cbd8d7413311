"""aiohttp.web's runner, on uvloop when it is installed."""

from __future__ import annotations

import asyncio
import errno

from aiohttp import web

from influencer_stats.config.settings import Settings
from influencer_stats.serving.address import announce, cannot_listen


def run(settings: Settings, app: web.Application) -> None:
    """Serve an aiohttp application; its cleanup context opens and closes the API."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is optional
        pass
    else:
        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    try:
        web.run_app(
            app,
            host=settings.host,
            port=settings.port,
            access_log=None,
            print=lambda _: announce(settings),  # aiohttp prints once it has bound the port
            shutdown_timeout=settings.graceful_shutdown_s,
            # One aiohttp timer closes a connection whose next request's headers are not
            # complete this long after it opened or answered: both the idle keep-alive
            # and the header timeout, so the smaller of the two.
            keepalive_timeout=min(settings.keepalive_s, settings.header_timeout_s),
            backlog=settings.backlog,
            # aiohttp bounds each line (the request line, every header) and their count, not
            # their total: each line at most the total we allow (400 beyond, aiohttp's own text).
            max_line_size=settings.max_header_bytes,
            max_field_size=settings.max_header_bytes,
            max_headers=settings.max_headers,
        )
    except OSError as error:
        if error.errno not in (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES):
            raise
        raise cannot_listen(settings.host, settings.port, error) from None
