"""Quota economy as a user runs it: real service processes, the YouTube double, real Redis.

The double counts every videos.list call it answers: that count is the quota spent. Two
processes on one Redis share one budget, and a cold miss of both costs one call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from tests.integration.youtube_clients_support import YouTubeDouble
from tests.shared_redis import shared_redis_url, unique_prefix
from tests.support import expected_stats, profile_args, running_double_process, running_service
from youtube_double import VIDEOS_PATH

#: Every stats answer under a budget is one of these.
ALLOWED = {200, 503}
BUDGET = 4
#: Whether /metrics records anything here: the installed metrics default is not declared ``silent``
#: (with no metrics slice, ``none`` stands in and the budget's series are nowhere to read).
RECORDING = not SLOTS["metrics"].registry[str(SLOTS["metrics"].default_choice())].silent


def _calls(double_url: str) -> int:
    """videos.list calls the double answered: the quota spent."""
    return int(YouTubeDouble(double_url.removesuffix(VIDEOS_PATH)).counters()["calls"])


def _videos(collection: int, count: int = 3) -> list[str]:
    return [str(synthetic_video_id(collection * 100 + n)) for n in range(count)]


@pytest.fixture
def double(tmp_path: Path) -> Iterator[str]:
    with running_double_process(tmp_path / "double.log") as url:
        yield url


async def _hammer(url: str, collections: range, rounds: int) -> list[httpx.Response]:
    """Every collection's stats ``rounds`` times, all at once."""
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        tasks = [client.get(f"/collections/c{n}/stats") for _ in range(rounds) for n in collections]
        return list(await asyncio.gather(*tasks))


def test_a_spent_budget_serves_what_was_fetched_and_refuses_only_the_never_fetched(
    double: str, tmp_path: Path
) -> None:
    with (
        running_service(
            [*profile_args("youtube"), "--cache", "none"],
            tmp_path / "service.log",
            env={
                "YOUTUBE_API_URL": double,
                "YOUTUBE_API_KEY": "any",
                "INFLUENCER_STATS_QUOTA_PER_DAY": str(BUDGET),
                "INFLUENCER_STATS_VIDEO_TTL": "0.001",
                "INFLUENCER_STATS_CACHE_SWR": "0.001",
                "INFLUENCER_STATS_CACHE_SIE": "0.001",
            },
        ) as service,
        httpx.Client(base_url=service.url, timeout=10) as client,
    ):
        for n in range(8):
            assert client.put(f"/collections/c{n}", json={"videos": _videos(n)}).status_code == 201
        first = [client.get(f"/collections/c{n}/stats") for n in range(BUDGET)]  # one call each
        spent_calls = _calls(double)

        again = client.get("/collections/c0/stats")  # fetched before: served from the cache
        never = client.get(f"/collections/c{BUDGET}/stats")  # never fetched: nothing to serve
        load = asyncio.run(_hammer(service.url, range(8), rounds=10))
        metrics = client.get("/metrics").text
        ready = client.get("/readyz")

    assert [r.status_code for r in first] == [200] * BUDGET
    assert spent_calls == BUDGET
    assert again.status_code == 200
    assert again.json() == first[0].json()
    assert "detail=quota-exhausted" in again.headers["cache-status"]
    assert never.status_code == 503
    assert never.headers["content-type"] == "application/problem+json"
    assert never.json()["type"] == "urn:influencer-stats:problem:quota-exhausted"
    assert 0 < int(never.headers["retry-after"]) <= 25 * 3600
    statuses = [r.status_code for r in load]
    assert set(statuses) <= ALLOWED, statuses
    assert statuses.count(200) == 10 * BUDGET  # exactly the fetched collections
    assert _calls(double) == BUDGET  # never more than the budget
    spent = {f"influencer_stats_quota_units_spent_total {BUDGET}.0", "influencer_stats_quota_units_left 0.0"}
    assert {line for line in metrics.splitlines() if line in spent} == (spent if RECORDING else set())
    assert ready.status_code == 200  # the service still answers


def test_two_processes_on_one_redis_spend_one_budget_between_them(double: str, tmp_path: Path) -> None:
    env = {
        "YOUTUBE_API_URL": double,
        "YOUTUBE_API_KEY": "any",
        "REDIS_URL": shared_redis_url(),
        "INFLUENCER_STATS_REDIS_PREFIX": unique_prefix(),
        "INFLUENCER_STATS_QUOTA_PER_DAY": str(BUDGET),
    }
    with (
        running_service(profile_args("distributed"), tmp_path / "one.log", env=env) as one,
        running_service(profile_args("distributed"), tmp_path / "two.log", env=env) as two,
        httpx.Client(base_url=one.url, timeout=10) as client,
    ):
        for n in range(12):
            # 50 videos each: a full call per collection, so the budget runs out
            assert client.put(f"/collections/c{n}", json={"videos": _videos(n, 50)}).status_code == 201

        async def both() -> list[httpx.Response]:
            first, second = await asyncio.gather(
                _hammer(one.url, range(12), 3), _hammer(two.url, range(12), 3)
            )
            return first + second

        answers = asyncio.run(both())

    statuses = [r.status_code for r in answers]
    assert set(statuses) <= ALLOWED, statuses
    assert 200 in statuses and 503 in statuses
    assert _calls(double) == BUDGET  # all of it, and not one unit more


def test_two_processes_missing_the_same_videos_at_once_make_one_call_between_them(tmp_path: Path) -> None:
    videos = _videos(7, 40)  # one call's worth
    with running_double_process(tmp_path / "double.log", latency_ms=300) as slow_double:
        env = {
            "YOUTUBE_API_URL": slow_double,
            "YOUTUBE_API_KEY": "any",
            "REDIS_URL": shared_redis_url(),
            "INFLUENCER_STATS_REDIS_PREFIX": unique_prefix(),
        }
        with (
            running_service(profile_args("distributed"), tmp_path / "one.log", env=env) as one,
            running_service(profile_args("distributed"), tmp_path / "two.log", env=env) as two,
            httpx.Client(base_url=one.url, timeout=10) as client,
        ):
            assert client.put("/collections/cold", json={"videos": videos}).status_code == 201

            async def both() -> list[httpx.Response]:
                async with httpx.AsyncClient(timeout=10) as http:  # both miss while the call is out
                    return list(
                        await asyncio.gather(
                            *(http.get(f"{s.url}/collections/cold/stats") for s in (one, two))
                        )
                    )

            answers = asyncio.run(both())
            calls = _calls(slow_double)

    assert [a.json() for a in answers] == [expected_stats(videos)] * 2
    assert calls == 1  # the second process waited for the first's call instead of making its own
