"""uvicorn, for the ASGI servers (``starlette``, ``asgi``)."""

from __future__ import annotations

import socket
from typing import Any

import uvicorn

from influencer_stats.config.settings import Settings
from influencer_stats.http.routes import HEALTHZ
from influencer_stats.serving.address import announce, claim_the_address
from influencer_stats.serving.uvicorn_protocol import Limits, protocol_class


def limits(settings: Settings) -> Limits:
    """What one connection may cost; ``/healthz`` answers even over the concurrency limit."""
    return Limits(
        header_timeout_s=settings.header_timeout_s,
        body_timeout_s=settings.body_timeout_s,
        send_timeout_s=settings.send_timeout_s,
        max_header_bytes=settings.max_header_bytes,
        max_headers=settings.max_headers,
        max_pipelined=settings.max_pipelined,
        exempt_paths=frozenset({HEALTHZ}),
    )


class _Server(uvicorn.Server):
    """uvicorn's server, announcing the service once it listens."""

    def __init__(self, config: uvicorn.Config, settings: Settings) -> None:
        super().__init__(config)
        self._settings = settings

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            announce(self._settings)


def run(settings: Settings, app: Any) -> None:
    """Serve an ASGI app: JSON logs only (no access log), no ``server`` header, hardened httptools."""
    claim = claim_the_address(settings.host, settings.port)  # a busy port: one line, exit 1
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        http=protocol_class(limits(settings)),
        lifespan="on",
        access_log=False,
        log_level="warning",
        server_header=False,
        timeout_keep_alive=int(settings.keepalive_s),
        timeout_graceful_shutdown=int(settings.graceful_shutdown_s),
        limit_concurrency=settings.limit_concurrency,
        backlog=settings.backlog,
    )
    server = _Server(config, settings)
    try:
        server.run()
    finally:
        if claim is not None:
            claim.close()
    if not server.started:
        raise SystemExit(3)  # as uvicorn.run: the application failed to start
