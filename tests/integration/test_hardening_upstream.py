"""What the quota economy opened (issue 22), on every server: real service processes, real sockets,
the YouTube double as its own process, a real Redis where Redis is involved (what is the day's
budget's, a spent one and its Redis count down: test_quota_hardening.py, the ``quota`` slice's).

- One-video requests beside twenty 5,000-video ones are answered, not starved (all 504 at 2 s
  before).
- A worker waiting for another's call while Redis is frozen answers by its deadline (it waited
  out the whole freeze before).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from perf.service import pooled
from tests.containers import redis_server
from tests.integration.youtube_clients_support import YouTubeDouble
from tests.support import (
    SERVERS,
    RunningService,
    expected_stats,
    profile_args,
    running_double_process,
    running_service,
    wait_for,
)
from youtube_double import VIDEOS_PATH

PROBLEM = "urn:influencer-stats:problem:"
BIG = 5_000


def youtube_env(double: str, **settings: str) -> dict[str, str]:
    """The ``youtube`` profile's settings against the double (its key is any)."""
    return {"YOUTUBE_API_URL": double, "YOUTUBE_API_KEY": "any", **settings}


def calls_made(double: str) -> int:
    """videos.list calls the double answered: the quota units spent."""
    return int(YouTubeDouble(double.removesuffix(VIDEOS_PATH)).counters()["calls"])


def new_videos(first: int, count: int = BIG) -> list[str]:
    return [synthetic_video_id(first + n) for n in range(count)]


@pytest.mark.parametrize("server", SERVERS)
def test_one_video_requests_beside_twenty_big_ones_are_answered_not_starved(
    server: str, tmp_path: Path
) -> None:
    with (
        running_double_process(tmp_path / "double.log", latency_ms=100) as double,
        running_service(
            [*profile_args("youtube"), "--server", server], tmp_path / "service.log", env=youtube_env(double)
        ) as service,
        httpx.Client(base_url=service.url, timeout=30) as client,
    ):
        for n in range(20):
            client.put(f"/collections/big{n}", json={"videos": new_videos(n * BIG)})
        for n in range(10):
            client.put(f"/collections/small{n}", json={"videos": new_videos(1_000_000 + n, 1)})
        small, big = asyncio.run(_small_beside_big(service))

    assert small == [200] * 10  # each waited for a call or two, not for the 2,000 before it
    assert len(big) == 20 and set(big) <= {200, 504}


async def _small_beside_big(service: RunningService) -> tuple[list[int], list[int]]:
    limits = pooled(64)
    async with httpx.AsyncClient(base_url=service.url, timeout=30, limits=limits) as client:
        big = [asyncio.create_task(client.get(f"/collections/big{n}/stats")) for n in range(20)]
        await asyncio.sleep(0.3)  # their 2,000 calls are queued by now (a pacing, not an assertion)
        small = await asyncio.gather(*(client.get(f"/collections/small{n}/stats") for n in range(10)))
        return [r.status_code for r in small], [r.status_code for r in await asyncio.gather(*big)]


@pytest.mark.parametrize("server", SERVERS)
def test_a_worker_waiting_for_anothers_call_answers_by_its_deadline_while_redis_is_frozen(
    server: str, tmp_path: Path
) -> None:
    videos = new_videos(0, 40)
    timeouts = {"INFLUENCER_STATS_UPSTREAM_TIMEOUT": "5"}  # the double takes 1 s a call
    with (
        redis_server() as redis,
        running_double_process(tmp_path / "double.log", latency_ms=1_000) as double,
    ):
        env = youtube_env(double, REDIS_URL=redis.url, **timeouts)
        argv = [*profile_args("distributed"), "--server", server]
        with (
            running_service(argv, tmp_path / "a.log", env=env) as a,
            running_service(argv, tmp_path / "b.log", env=env) as b,
            httpx.Client(timeout=30) as client,
        ):
            assert client.put(f"{a.url}/collections/c", json={"videos": videos}).status_code == 201
            waited = asyncio.run(_wait_while_frozen(a, b, redis.container.get_wrapped_container()))
            assert wait_for(lambda: client.get(f"{b.url}/readyz").status_code == 200, 20)
            after = client.get(f"{b.url}/collections/c/stats")

    status, seconds = waited
    assert status in (200, 504)  # its entries, or the deadline: never the whole freeze
    assert seconds < 5.0, f"the waiter answered after {seconds:.1f} s of an 8 s freeze"
    assert after.status_code == 200 and after.json() == expected_stats(videos)


async def _wait_while_frozen(a: RunningService, b: RunningService, docker: Any) -> tuple[int, float]:
    """A calls for the videos (1 s), B misses them a moment later and waits for A's call; then
    Redis freezes for 8 s. How B answered, and after how long."""
    async with httpx.AsyncClient(timeout=30) as client:
        first = asyncio.create_task(client.get(f"{a.url}/collections/c/stats"))
        await asyncio.sleep(0.3)  # A has claimed them and its call is out (pacing)
        started = time.monotonic()
        second = asyncio.create_task(client.get(f"{b.url}/collections/c/stats"))
        await asyncio.sleep(0.3)  # B waits for A's entries now
        await asyncio.to_thread(docker.pause)
        try:
            done, _ = await asyncio.wait({second}, timeout=8)
            answered = second.result() if done else None
            seconds = time.monotonic() - started
        finally:
            await asyncio.to_thread(docker.unpause)
        reply = answered or await second
        await first
        return reply.status_code, seconds
