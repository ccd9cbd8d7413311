"""The double's aiohttp application: videos.list, /healthz and the control API.

:func:`create_app` wires the routes to a
:class:`~influencer_stats.testing.youtube_double.state.DoubleState`; the helpers
below turn the bodies of :mod:`~influencer_stats.testing.youtube_double.wire` and
:mod:`~influencer_stats.testing.youtube_double.errors` into responses, including
the faulty ones (an aborted connection, truncated JSON, a bad count).
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Final, NoReturn, cast

from aiohttp import web

from influencer_stats.testing.youtube_double.errors import (
    backend_error_body,
    bad_key_body,
    missing_id_body,
    missing_part_body,
    part_without_statistics_body,
    quota_body,
    rate_limit_body,
    too_many_body,
    too_many_ids_body,
)
from influencer_stats.testing.youtube_double.state import FAULT_MODES, DoubleState, FaultMode
from influencer_stats.testing.youtube_double.wire import (
    MAX_IDS_PER_CALL,
    VIDEOS_PATH,
    JsonObject,
    dump_json,
    render_videos_list,
    videos_list_response,
)

_FAULT_RESPONSES: Final[dict[str, tuple[int, Callable[[], JsonObject]]]] = {
    "quota": (403, quota_body),
    "rate_limit": (403, rate_limit_body),
    "bad_key": (400, bad_key_body),
    "server_error": (500, lambda: backend_error_body(500)),
    "unavailable": (503, lambda: backend_error_body(503)),
    "too_many": (429, too_many_body),
}


def _json_response(status: int, obj: object) -> web.Response:
    return web.Response(status=status, body=dump_json(obj), content_type="application/json", charset="UTF-8")


def _bytes_response(body: bytes) -> web.Response:
    return web.Response(status=200, body=body, content_type="application/json", charset="UTF-8")


class _ConnectionAborted(web.HTTPInternalServerError):
    """Raised after the transport was aborted; aiohttp cannot write it anywhere."""


def _abort_connection(request: web.Request) -> NoReturn:
    transport = request.transport
    if transport is not None:
        transport.abort()
    # The transport is closing, so aiohttp's attempt to send this exception's
    # response fails with ConnectionResetError, which it treats as a client
    # disconnect: nothing reaches the wire and nothing is logged as an error.
    raise _ConnectionAborted()


def _bad_count_body(ids: Sequence[str], bad_value: str) -> bytes:
    response = videos_list_response(ids)
    items = cast(list[JsonObject], response["items"])
    if items:
        items[0]["statistics"]["viewCount"] = bad_value
    return dump_json(response)


def create_app(state: DoubleState, *, require_key: str | None = None, latency_ms: int = 0) -> web.Application:
    """The double's aiohttp application, reporting into ``state``.

    With ``require_key`` set, a videos.list request must carry exactly that key
    in the ``X-Goog-Api-Key`` header (a ``key`` query parameter does not count
    and is recorded as a leak). ``latency_ms`` delays every videos.list call.
    """
    closing = asyncio.Event()
    latency_s = max(latency_ms, 0) / 1000.0

    async def sleep_unless_closing(seconds: float) -> None:
        if seconds <= 0:
            return
        with suppress(TimeoutError):
            await asyncio.wait_for(closing.wait(), timeout=seconds)

    async def videos(request: web.Request) -> web.StreamResponse:
        query = request.query
        ids = [piece for raw in query.getall("id", []) for piece in raw.split(",") if piece]
        header_key = request.headers.get("X-Goog-Api-Key")
        state.record(
            ids,
            key_header=bool(header_key),
            key_in_query="key" in query,
            traceparent=request.headers.get("traceparent"),
        )
        fault = state.take_fault()  # before any await: concurrent calls consume in order

        await sleep_unless_closing(latency_s)

        if fault.mode == "reset":
            _abort_connection(request)
        if fault.mode in _FAULT_RESPONSES:
            status, make_body = _FAULT_RESPONSES[fault.mode]
            return _json_response(status, make_body())
        if fault.mode == "stall":
            await sleep_unless_closing(fault.stall_seconds)

        if require_key is not None and not (
            header_key is not None and hmac.compare_digest(header_key.encode(), require_key.encode())
        ):
            return _json_response(400, bad_key_body())
        parts = [p.strip() for p in ",".join(query.getall("part", [])).split(",")]
        if not any(parts):
            return _json_response(400, missing_part_body())
        if "statistics" not in parts:
            return _json_response(400, part_without_statistics_body(query.get("part", "")))
        if "id" not in query:
            return _json_response(400, missing_id_body())
        if len(ids) > MAX_IDS_PER_CALL:
            return _json_response(400, too_many_ids_body(len(ids)))

        if fault.mode == "malformed":
            body = render_videos_list(ids)
            return _bytes_response(body[: max(len(body) // 2, 1)])
        if fault.mode == "bad_count":
            return _bytes_response(_bad_count_body(ids, fault.bad_value))
        return _bytes_response(render_videos_list(ids))

    async def healthz(request: web.Request) -> web.StreamResponse:
        return web.Response(text="ok")

    async def control_fault(request: web.Request) -> web.StreamResponse:
        try:
            payload = await request.json()
        except ValueError:
            return _json_response(400, {"error": "body must be a JSON object"})
        if not isinstance(payload, dict):
            return _json_response(400, {"error": "body must be a JSON object"})
        mode = payload.get("mode")
        count = payload.get("count")
        stall = payload.get("stall_seconds")
        bad_value = payload.get("bad_value")
        if mode not in FAULT_MODES:
            return _json_response(400, {"error": f"mode must be one of {list(FAULT_MODES)}", "got": mode})
        if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
            return _json_response(400, {"error": "count must be an integer >= 1 or null"})
        if stall is not None and (isinstance(stall, bool) or not isinstance(stall, int | float) or stall < 0):
            return _json_response(400, {"error": "stall_seconds must be a number >= 0"})
        if bad_value is not None and not isinstance(bad_value, str):
            return _json_response(400, {"error": "bad_value must be a string"})
        fault = state.set_fault(
            cast(FaultMode, mode),
            count,
            stall_seconds=None if stall is None else float(stall),
            bad_value=bad_value,
        )
        return _json_response(200, fault.to_json())

    async def control_stats(request: web.Request) -> web.StreamResponse:
        return _json_response(200, state.snapshot())

    async def control_reset(request: web.Request) -> web.StreamResponse:
        state.reset()
        return _json_response(200, state.snapshot())

    async def on_shutdown(app: web.Application) -> None:
        closing.set()  # wake stalled and delayed handlers so shutdown is quick

    app = web.Application()
    app.router.add_get(VIDEOS_PATH, videos)
    app.router.add_get("/healthz", healthz)
    app.router.add_post("/_control/fault", control_fault)
    app.router.add_get("/_control/stats", control_stats)
    app.router.add_post("/_control/reset", control_reset)
    app.on_shutdown.append(on_shutdown)
    return app
