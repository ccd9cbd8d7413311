"""The double's aiohttp application: the three list methods, /healthz and the control API.

:func:`create_app` wires the routes to a
:class:`~youtube_double.state.DoubleState`. Every list
method (videos.list, playlistItems.list, channels.list; see
:mod:`~youtube_double.endpoints`) goes through one
request path, so a fault, the latency and the key apply to all three alike.
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import Final

from aiohttp import web

from youtube_double.control import CONTROL_MAX_BYTES, control_routes
from youtube_double.endpoints import ENDPOINTS, Endpoint, spoil_first_item
from youtube_double.errors import (
    backend_error_body,
    bad_key_body,
    missing_part_body,
    quota_body,
    rate_limit_body,
    too_many_body,
)
from youtube_double.listings import page_token
from youtube_double.replies import abort_connection, bytes_response, json_response
from youtube_double.state import DoubleState
from youtube_double.wire import JsonObject, dump_json

_FAULT_RESPONSES: Final[dict[str, tuple[int, Callable[[], JsonObject]]]] = {
    "quota": (403, quota_body),
    "rate_limit": (403, rate_limit_body),
    "bad_key": (400, bad_key_body),
    "server_error": (500, lambda: backend_error_body(500)),
    "unavailable": (503, lambda: backend_error_body(503)),
    "too_many": (429, too_many_body),
}


def create_app(state: DoubleState, *, require_key: str | None = None, latency_ms: int = 0) -> web.Application:
    """The double's aiohttp application, reporting into ``state``.

    With ``require_key`` set, a call of any list method must carry exactly that
    key in the ``X-Goog-Api-Key`` header (a ``key`` query parameter does not
    count and is recorded as a leak). ``latency_ms`` delays every such call.
    """
    closing = asyncio.Event()
    latency_s = max(latency_ms, 0) / 1000.0

    async def sleep_unless_closing(seconds: float) -> None:
        if seconds <= 0:
            return
        with suppress(TimeoutError):
            await asyncio.wait_for(closing.wait(), timeout=seconds)

    def key_rejected(header_key: str | None) -> bool:
        return require_key is not None and not (
            header_key is not None and hmac.compare_digest(header_key.encode(), require_key.encode())
        )

    async def serve(request: web.Request, endpoint: Endpoint) -> web.StreamResponse:
        query = request.query
        header_key = request.headers.get("X-Goog-Api-Key")
        state.note_key(header=bool(header_key), in_query="key" in query)
        endpoint.record(state, request)
        fault = state.take_fault()  # before any await: concurrent calls consume in order

        await sleep_unless_closing(latency_s)

        if fault.mode == "reset":
            abort_connection(request)
        if fault.mode in _FAULT_RESPONSES:
            status, make_body = _FAULT_RESPONSES[fault.mode]
            return json_response(status, make_body())
        if fault.mode == "stall":
            await sleep_unless_closing(fault.stall_seconds)

        if key_rejected(header_key):
            return json_response(400, bad_key_body())
        parts = [p.strip() for p in ",".join(query.getall("part", [])).split(",")]
        if not any(parts):
            return json_response(400, missing_part_body())
        status, body = endpoint.answer(state, query, parts)
        if status != 200:
            return json_response(status, body)

        if fault.mode == "malformed":
            whole = dump_json(body)
            return bytes_response(whole[: max(len(whole) // 2, 1)])
        if fault.mode == "bad_count":
            spoil_first_item(body, endpoint.bad_field, fault.bad_value)
        if fault.mode == "loop_token" and endpoint.pages:
            body["nextPageToken"] = query.get("pageToken") or page_token(0)
        return bytes_response(dump_json(body))

    def handler(endpoint: Endpoint) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def handle(request: web.Request) -> web.StreamResponse:
            return await serve(request, endpoint)

        return handle

    async def healthz(request: web.Request) -> web.StreamResponse:
        return web.Response(text="ok")

    async def on_shutdown(app: web.Application) -> None:
        closing.set()  # wake stalled and delayed handlers so shutdown is quick

    app = web.Application(client_max_size=CONTROL_MAX_BYTES)
    for endpoint in ENDPOINTS:
        app.router.add_get(endpoint.path, handler(endpoint))
    app.router.add_get("/healthz", healthz)
    app.add_routes(control_routes(state))
    app.on_shutdown.append(on_shutdown)
    return app
