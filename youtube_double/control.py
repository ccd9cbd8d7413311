"""The control API: faults, counters, reset, and the playlists and channels the double holds.

Every route answers JSON; a malformed body is a 400 ``{"error": ...}`` and
changes nothing. The definitions are validated by
:class:`~youtube_double.state.DoubleState` itself, so
the control API and the Python API accept exactly the same things.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final, cast

from aiohttp import web

from youtube_double.replies import json_response
from youtube_double.state import FAULT_MODES, DoubleState, FaultMode

CONTROL_MAX_BYTES: Final = 8 * 1024 * 1024
"""Largest control body accepted: a playlist of the most videos, all of them marked, fits."""


async def _json_object(request: web.Request) -> dict[str, Any]:
    try:
        payload = await request.json()
    except ValueError:
        raise ValueError("body must be a JSON object") from None
    if not isinstance(payload, dict):
        raise ValueError("body must be a JSON object")
    return payload


def _list(payload: dict[str, Any], key: str, *, required: bool = False) -> list[object]:
    """``payload[key]``, a JSON array (absent: empty, unless ``required``)."""
    if required and key not in payload:
        raise ValueError(f"{key} is required: a list of video ids")
    value = payload.get(key, [])
    if not isinstance(value, list):
        raise ValueError(f"{key} must be a list of video ids")
    return value


def _fault(state: DoubleState, payload: dict[str, Any]) -> web.Response:
    mode = payload.get("mode")
    count = payload.get("count")
    stall = payload.get("stall_seconds")
    bad_value = payload.get("bad_value")
    if mode not in FAULT_MODES:
        return json_response(400, {"error": f"mode must be one of {list(FAULT_MODES)}", "got": mode})
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise ValueError("count must be an integer >= 1 or null")
    if stall is not None and (isinstance(stall, bool) or not isinstance(stall, int | float) or stall < 0):
        raise ValueError("stall_seconds must be a number >= 0")
    if bad_value is not None and not isinstance(bad_value, str):
        raise ValueError("bad_value must be a string")
    fault = state.set_fault(
        cast(FaultMode, mode),
        count,
        stall_seconds=None if stall is None else float(stall),
        bad_value=bad_value,
    )
    return json_response(200, fault.to_json())


# The casts below only satisfy the Python API's types: the state checks every id itself.


def _playlist(state: DoubleState, payload: dict[str, Any]) -> web.Response:
    playlist_id = payload.get("id")
    entries = state.set_playlist(
        cast(str, playlist_id),
        cast(list[str], _list(payload, "videos", required=True)),
        private=cast(list[str], _list(payload, "private")),
        deleted=cast(list[str], _list(payload, "deleted")),
        unlisted=cast(list[str], _list(payload, "unlisted")),
    )
    return json_response(200, {"id": playlist_id, "entries": len(entries)})


def _channel(state: DoubleState, payload: dict[str, Any]) -> web.Response:
    channel_id = payload.get("id")
    uploads = _list(payload, "uploads", required=True)
    uploads_id = state.set_channel(cast(str, channel_id), cast(list[str], uploads))
    return json_response(200, {"id": channel_id, "uploads": uploads_id, "entries": len(uploads)})


def control_routes(state: DoubleState) -> list[web.RouteDef]:
    """The ``/_control/*`` routes acting on ``state``.

    ``POST /_control/fault`` ``{"mode", "count"?, "stall_seconds"?, "bad_value"?}``;
    ``GET /_control/stats``; ``POST /_control/reset``;
    ``POST /_control/playlists`` ``{"id", "videos", "private"?, "deleted"?, "unlisted"?}``;
    ``POST /_control/channels`` ``{"id": "UC...", "uploads"}`` (also defines ``UU...``).
    """

    def posting(
        act: Callable[[DoubleState, dict[str, Any]], web.Response],
    ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def handle(request: web.Request) -> web.StreamResponse:
            try:
                return act(state, await _json_object(request))
            except ValueError as error:  # a malformed body, or a definition the state refused
                return json_response(400, {"error": str(error)})

        return handle

    async def stats(request: web.Request) -> web.StreamResponse:
        return json_response(200, state.snapshot())

    async def reset(request: web.Request) -> web.StreamResponse:
        state.reset()
        return json_response(200, state.snapshot())

    return [
        web.post("/_control/fault", posting(_fault)),
        web.get("/_control/stats", stats),
        web.post("/_control/reset", reset),
        web.post("/_control/playlists", posting(_playlist)),
        web.post("/_control/channels", posting(_channel)),
    ]
