"""Reads of playlists and channels against a slow YouTube: the real service and the YouTube double
as their own processes, on real sockets.

- Twenty imports at once on a pool of four connections, the double at 150 ms a call: every one
  waits for connections untimed and ends 201, the stats beside them answer, and the units spent
  are exactly the calls that reached the double (issue 31: 18 of 20 were 504 at 1 s, 216 units
  for 198 calls).
- A read whose remaining pages do not fit in what is left of the day's budget stops after its
  first page (503 quota-exhausted), leaving the rest to the stats.
- Concurrent refreshes of one collection share one read; one soon after a read is 429 with
  Retry-After; pages that name their own token again are 502 after two calls.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from tests.integration.youtube_clients_support import YouTubeDouble
from tests.support import profile_args, running_double_process, running_service
from youtube_double import VIDEOS_PATH

VIDEOS = [str(synthetic_video_id(n)) for n in range(600)]
IMPORTS = 20


@pytest.fixture
def slow_double(tmp_path: Path) -> Iterator[tuple[str, YouTubeDouble]]:
    with running_double_process(tmp_path / "double.log", latency_ms=150) as url:
        yield url, YouTubeDouble(url.removesuffix(VIDEOS_PATH))


def _env(url: str, **settings: str) -> dict[str, str]:
    return {"YOUTUBE_API_URL": url, "YOUTUBE_API_KEY": "any", **settings}


def _units_spent(metrics: str) -> int:
    found = re.search(r"^influencer_stats_quota_units_spent_total (\S+)$", metrics, re.M)
    assert found is not None, metrics
    return int(float(found.group(1)))


async def _at_once(url: str) -> tuple[list[httpx.Response], list[httpx.Response]]:
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        imports = [http.put(f"/collections/i{n}", json={"playlist": "PLbig"}) for n in range(IMPORTS)]
        stats = [http.get("/collections/ids/stats") for _ in range(3)]
        done = await asyncio.gather(*imports, *stats)
    return list(done[:IMPORTS]), list(done[IMPORTS:])


def test_imports_at_once_wait_for_connections_untimed_and_spend_a_unit_per_call_made(
    slow_double: tuple[str, YouTubeDouble], tmp_path: Path
) -> None:
    url, youtube = slow_double
    youtube.playlist("PLbig", VIDEOS[:500])  # 10 pages: 200 calls at 4 at a time, 7.5 s
    env = _env(url, INFLUENCER_STATS_UPSTREAM_CONNECTIONS="4")
    with (
        running_service(profile_args("youtube"), tmp_path / "s.log", env=env) as service,
        httpx.Client(base_url=service.url, timeout=30) as http,
    ):
        assert http.put("/collections/ids", json={"videos": VIDEOS[:3]}).status_code == 201
        imports, stats = asyncio.run(_at_once(service.url))
        spent = _units_spent(http.get("/metrics").text)
    counters = youtube.counters()

    assert [r.status_code for r in imports] == [201] * IMPORTS, [
        r.text for r in imports if r.status_code != 201
    ]
    assert all(len(r.json()["videos"]) == 500 for r in imports)
    assert [r.status_code for r in stats] == [200] * 3
    assert counters["playlist_items_calls"] == 10 * IMPORTS
    assert spent == counters["playlist_items_calls"] + counters["calls"]  # a unit per call made


def test_a_read_the_budget_left_cannot_finish_stops_after_its_first_page(
    slow_double: tuple[str, YouTubeDouble], tmp_path: Path
) -> None:
    url, youtube = slow_double
    youtube.playlist("PLbig", VIDEOS)  # 12 pages
    youtube.playlist("PLsmall", VIDEOS[:120])  # 3 pages
    env = _env(url, INFLUENCER_STATS_QUOTA_PER_DAY="10")
    with (
        running_service(profile_args("youtube"), tmp_path / "s.log", env=env) as service,
        httpx.Client(base_url=service.url, timeout=30) as http,
    ):
        refused = http.put("/collections/big", json={"playlist": "PLbig"})
        calls = youtube.counters()["playlist_items_calls"]
        small = http.put("/collections/small", json={"playlist": "PLsmall"})
        assert http.put("/collections/ids", json={"videos": VIDEOS[:3]}).status_code == 201
        stats = http.get("/collections/ids/stats")

    assert refused.status_code == 503 and refused.json()["type"].endswith(":quota-exhausted")
    assert int(refused.headers["retry-after"]) >= 1
    assert "needs 11 more" in refused.json()["detail"] and "9 are left" in refused.json()["detail"]
    assert calls == 1  # its first page, nothing more
    assert small.status_code == 201 and len(small.json()["videos"]) == 120
    assert stats.status_code == 200  # what the refused read did not burn, the stats have


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
