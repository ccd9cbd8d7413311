"""Talking to the YouTube double (its three list methods) over real sockets, for ``test_youtube_double_*``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import aiohttp

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from youtube_double import (
    RunningDouble,
    backend_error_body,
    bad_key_body,
    quota_body,
    rate_limit_body,
    too_many_body,
)

BOUND = 10.0  # seconds: upper bound of every wait, never a timing assumption

#: The faults answered with an error status: (mode, HTTP status, body), for every list method.
STATUS_FAULTS: list[tuple[str, int, dict[str, Any]]] = [
    ("quota", 403, quota_body()),
    ("rate_limit", 403, rate_limit_body()),
    ("bad_key", 400, bad_key_body()),
    ("server_error", 500, backend_error_body(500)),
    ("unavailable", 503, backend_error_body(503)),
    ("too_many", 429, too_many_body()),
]


def ids(n: int, start: int = 0) -> list[str]:
    return [synthetic_video_id(i) for i in range(start, start + n)]


async def get_videos(
    session: aiohttp.ClientSession,
    yt: RunningDouble,
    id_param: str,
    *,
    part: str | None = "statistics",
    headers: dict[str, str] | None = None,
    extra: str = "",
) -> tuple[int, bytes]:
    query = f"id={id_param}" if part is None else f"part={part}&id={id_param}"
    async with session.get(f"{yt.url}?{query}{extra}", headers=headers) as resp:
        return resp.status, await resp.read()


async def set_fault(session: aiohttp.ClientSession, yt: RunningDouble, **body: Any) -> dict[str, Any]:
    async with session.post(f"{yt.base}/_control/fault", json=body) as resp:
        assert resp.status == 200, await resp.text()
        result: dict[str, Any] = await resp.json()
        return result


async def stats(session: aiohttp.ClientSession, yt: RunningDouble) -> dict[str, Any]:
    async with session.get(f"{yt.base}/_control/stats") as resp:
        assert resp.status == 200
        result: dict[str, Any] = await resp.json()
        return result


async def get_listing(
    session: aiohttp.ClientSession,
    url: str,
    params: Mapping[str, object],
    headers: dict[str, str] | None = None,
) -> tuple[int, bytes]:
    """GET ``url`` with the ``params`` that are not None; the status and the raw body."""
    query = {key: str(value) for key, value in params.items() if value is not None}
    async with session.get(url, params=query, headers=headers) as resp:
        return resp.status, await resp.read()


async def get_playlist_items(
    session: aiohttp.ClientSession,
    yt: RunningDouble,
    playlist_id: str | None,
    *,
    part: str | None = "contentDetails,status",
    max_results: int | str | None = None,
    page_token: str | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, bytes]:
    params = {"part": part, "playlistId": playlist_id, "maxResults": max_results, "pageToken": page_token}
    return await get_listing(session, yt.playlist_items_url, params, headers)


async def get_channels(
    session: aiohttp.ClientSession,
    yt: RunningDouble,
    channel_ids: str | None,
    *,
    part: str | None = "contentDetails",
    headers: dict[str, str] | None = None,
) -> tuple[int, bytes]:
    return await get_listing(session, yt.channels_url, {"part": part, "id": channel_ids}, headers)
