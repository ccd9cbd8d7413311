"""What reads of playlists and channels spend of the day's budget, as a user runs them: the real
service and the YouTube double as their own processes, on real sockets (the ``sources`` and the
``quota`` slices' both: it goes with the first removed).

- The day's budget counts these calls too: past it an import is refused and nothing is called.
- Twenty imports at once on a pool of four connections, the double at 150 ms a call: every one
  waits for connections untimed and ends 201, the stats beside them answer, and the units spent
  are exactly the calls that reached the double (issue 31: 18 of 20 were 504 at 1 s, 216 units
  for 198 calls).
- A read whose remaining pages do not fit in what is left of the day's budget stops after its
  first page (503 quota-exhausted), leaving the rest to the stats.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.integration.test_source_reads import VIDEOS, _env
from tests.integration.test_sources import _calls
from tests.integration.youtube_clients_support import YouTubeDouble
from tests.support import profile_args, running_double_process, running_service
from youtube_double import VIDEOS_PATH

IMPORTS = 20


@pytest.fixture
def double(tmp_path: Path) -> Iterator[tuple[str, YouTubeDouble]]:
    with running_double_process(tmp_path / "double.log") as url:
        yield url, YouTubeDouble(url.removesuffix(VIDEOS_PATH))


@pytest.fixture
def slow_double(tmp_path: Path) -> Iterator[tuple[str, YouTubeDouble]]:
    with running_double_process(tmp_path / "double.log", latency_ms=150) as url:
        yield url, YouTubeDouble(url.removesuffix(VIDEOS_PATH))


def test_the_days_budget_counts_these_calls_and_none_is_made_past_it(
    double: tuple[str, YouTubeDouble], tmp_path: Path
) -> None:
    url, youtube = double
    youtube.playlist("PLlong", VIDEOS[:120])  # 3 pages
    env = _env(url, INFLUENCER_STATS_QUOTA_PER_DAY="4")
    with (
        running_service(profile_args("youtube"), tmp_path / "s.log", env=env) as service,
        httpx.Client(base_url=service.url, timeout=30) as http,
    ):
        first = http.put("/collections/a", json={"playlist": "PLlong"})
        second = http.put("/collections/b", json={"playlist": "PLlong"})  # 1 unit left: 1 page of 3
        calls = _calls(youtube)

    assert first.status_code == 201 and len(first.json()["videos"]) == 120
    assert second.status_code == 503 and second.json()["type"].endswith("quota-exhausted")
    assert int(second.headers["retry-after"]) >= 1
    assert calls == (4, 0)


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
