"""Talking to the videos.list double over real sockets, for the ``test_youtube_double_*`` modules."""

from __future__ import annotations

from typing import Any

import aiohttp

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from influencer_stats.testing.youtube_double import RunningDouble

BOUND = 10.0  # seconds: upper bound of every wait, never a timing assumption


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
