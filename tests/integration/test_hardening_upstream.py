"""What the quota economy opened (issue 22), on every server: real service processes, real sockets,
the YouTube double as its own process (what is the day's budget's, a spent one: test_quota_hardening.py,
the ``quota`` slice's; its Redis count down: test_quota_redis.py; a waiter while Redis is frozen:
test_video_cache_redis_frozen.py, the joint ``redis__video_cache``'s).

- One-video requests beside twenty 5,000-video ones are answered, not starved (all 504 at 2 s
  before).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from perf.service import pooled
from tests.integration.youtube_clients_support import YouTubeDouble
from tests.support import (
    SERVERS,
    RunningService,
    profile_args,
    running_double_process,
    running_service,
)
from youtube_double import VIDEOS_PATH

PROBLEM = "urn:influencer-stats:problem:"
BIG = 5_000


def youtube_env(double: str, **settings: str) -> dict[str, str]:
    """The ``youtube`` profile's settings against the double (its key is any), the one client
    these tests are given a share far above what they spend (2,000 units at most): here the
    upstream's limits are under test, not a client's share (the shares slice's test_shares)."""
    share = {"INFLUENCER_STATS_SHARE": "1000000/hour"}
    return {"YOUTUBE_API_URL": double, "YOUTUBE_API_KEY": "any", **share, **settings}


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
