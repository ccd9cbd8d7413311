"""``traceparent`` on every ``videos.list`` request: an httpx event hook, an aiohttp trace config.

The root passes these to the client it builds only when tracing is on; the hooks inject the
current span's context (``TracedVideosList``'s CLIENT span) with W3C Trace Context. Each
imports its client library only when asked for.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from influencer_stats.interpreters.tracing.otel import PROPAGATOR

if TYPE_CHECKING:
    import aiohttp
    import httpx


async def _inject_httpx(request: httpx.Request) -> None:
    PROPAGATOR.inject(request.headers)


def httpx_hooks() -> dict[str, list[Any]]:
    """``event_hooks`` for ``httpx.AsyncClient``: each request carries the current ``traceparent``."""
    return {"request": [_inject_httpx]}


async def _inject_aiohttp(
    _: aiohttp.ClientSession, __: SimpleNamespace, params: aiohttp.TraceRequestStartParams
) -> None:
    PROPAGATOR.inject(params.headers)  # the headers the request is then built with


def aiohttp_trace_configs() -> list[aiohttp.TraceConfig]:
    """``trace_configs`` for ``aiohttp.ClientSession``: each request carries the current ``traceparent``."""
    import aiohttp

    config = aiohttp.TraceConfig()
    config.on_request_start.append(_inject_aiohttp)
    return [config]
