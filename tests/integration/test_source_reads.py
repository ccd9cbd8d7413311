"""Reads of playlists and channels against a slow YouTube: the real service and the YouTube double
as their own processes, on real sockets.

- What they spend of the day's budget: test_sources_quota.py (the ``quota`` slice's too).
- Concurrent refreshes of one collection share one read; one soon after a read is 429 with
  Retry-After; pages that name their own token again are 502 after two calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from tests.integration.youtube_clients_support import YouTubeDouble
from tests.support import profile_args, running_double_process, running_service
from youtube_double import VIDEOS_PATH

VIDEOS = [str(synthetic_video_id(n)) for n in range(600)]


@pytest.fixture
def slow_double(tmp_path: Path) -> Iterator[tuple[str, YouTubeDouble]]:
    with running_double_process(tmp_path / "double.log", latency_ms=150) as url:
        yield url, YouTubeDouble(url.removesuffix(VIDEOS_PATH))


def _env(url: str, **settings: str) -> dict[str, str]:
    return {"YOUTUBE_API_URL": url, "YOUTUBE_API_KEY": "any", **settings}


async def _refreshes(url: str, n: int) -> list[httpx.Response]:
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        return list(await asyncio.gather(*(http.post("/collections/c/refresh", json={}) for _ in range(n))))


def test_refreshes_share_a_read_a_soon_one_is_429_and_a_looping_token_is_502_at_once(
    slow_double: tuple[str, YouTubeDouble], tmp_path: Path
) -> None:
    url, youtube = slow_double
    youtube.playlist("PLc", VIDEOS[:150])  # 3 pages
    with (
        running_service(profile_args("youtube"), tmp_path / "s.log", env=_env(url)) as service,
        httpx.Client(base_url=service.url, timeout=30) as http,
    ):
        assert http.put("/collections/c", json={"playlist": "PLc"}).status_code == 201
        soon = http.post("/collections/c/refresh", json={})
        calls_after_soon = youtube.counters()["playlist_items_calls"]
    with running_service(
        profile_args("youtube"), tmp_path / "t.log", env=_env(url, INFLUENCER_STATS_REFRESH_MIN_INTERVAL="0")
    ) as service:
        assert httpx.put(f"{service.url}/collections/c", json={"playlist": "PLc"}).status_code == 201
        before = youtube.counters()["playlist_items_calls"]
        shared = asyncio.run(_refreshes(service.url, 5))
        after_shared = youtube.counters()["playlist_items_calls"]
        youtube.fault("loop_token")  # until changed
        looping = httpx.put(f"{service.url}/collections/loop", json={"playlist": "PLc"}, timeout=30)
        youtube.fault("none")
        calls_looping = youtube.counters()["playlist_items_calls"] - after_shared

    assert soon.status_code == 429 and soon.json()["type"].endswith(":refresh-too-soon")
    assert 1 <= int(soon.headers["retry-after"]) <= 60
    assert calls_after_soon == 3  # the import's pages only
    assert [r.status_code for r in shared] == [200] * 5
    assert after_shared - before == 3  # one read for five refreshes
    assert looping.status_code == 502 and looping.json()["type"].endswith(":upstream-invalid-response")
    assert calls_looping == 2
