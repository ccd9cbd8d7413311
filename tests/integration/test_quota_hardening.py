"""What the quota economy opened (issue 22) that is the budget's, on every server: real service
processes, real sockets, the YouTube double as its own process, a real Redis where Redis is
involved (the rest: test_hardening_upstream.py).

- Anonymous clients writing new ids and asking for their stats while every call fails (the
  day's budget spent): nothing is kept per id that could not be fetched, RSS stays flat (it grew
  56 → 454 MB in 25 s on starlette before).
- The Redis quota count not answering is a 503 of its own (``shared-state-unavailable``) that
  leaves YouTube's circuit closed (a 502 that opened it for 5 s before).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from perf.procs import memory_of_tree
from tests.containers import redis_server
from tests.integration.test_hardening_upstream import BIG, PROBLEM, new_videos, youtube_env
from tests.support import SERVERS, expected_stats, profile_args, running_double_process, running_service


@pytest.fixture
def double(tmp_path: Path) -> Iterator[str]:
    with running_double_process(tmp_path / "double.log") as url:
        yield url


def test_new_videos_asked_for_while_every_call_fails_leave_memory_flat(double: str, tmp_path: Path) -> None:
    # On the core's server only: what could grow is the quota's and the cache's bookkeeping
    # behind the edge, shared by every server (test_memory holds each server's own framing).
    server = SERVERS[0]
    env = youtube_env(double, INFLUENCER_STATS_QUOTA_PER_DAY="1")
    argv = [*profile_args("youtube"), "--server", server]
    with (
        running_service(argv, tmp_path / "service.log", env=env) as service,
        httpx.Client(base_url=service.url, timeout=30) as client,
    ):
        client.put("/collections/warm", json={"videos": new_videos(0, 1)})
        assert client.get("/collections/warm/stats").status_code == 200  # the day's one unit
        statuses = _write_and_ask(client, rounds=30, first=1_000_000)  # the allocator settles
        before = memory_of_tree(service.process.pid).rss_mb
        statuses += _write_and_ask(client, rounds=200, first=10_000_000)
        after = memory_of_tree(service.process.pid).rss_mb

    assert set(statuses) == {503}  # quota-exhausted: none of them was ever fetched
    assert after - before < 30, f"RSS grew {before:.0f} -> {after:.0f} MB over 200 x {BIG:,} new ids"


def _write_and_ask(client: httpx.Client, rounds: int, first: int) -> list[int]:
    statuses = []
    for n in range(rounds):
        assert client.put(f"/collections/c{n % 10}", json={"videos": new_videos(first + n * BIG)}).is_success
        reply = client.get(f"/collections/c{n % 10}/stats")
        assert reply.json()["type"] == PROBLEM + "quota-exhausted"
        statuses.append(reply.status_code)
    return statuses


@pytest.mark.parametrize("server", SERVERS)
def test_the_redis_quota_count_down_is_a_503_of_its_own_and_leaves_youtube_trusted(
    server: str, double: str, tmp_path: Path
) -> None:
    with redis_server() as redis:
        env = youtube_env(double, REDIS_URL=redis.url, INFLUENCER_STATS_QUOTA="redis")
        with (
            running_service(
                [*profile_args("youtube"), "--server", server], tmp_path / "svc.log", env=env
            ) as service,
            httpx.Client(base_url=service.url, timeout=30) as client,
        ):
            for n in range(8):
                client.put(f"/collections/c{n}", json={"videos": new_videos(n * 10, 3)})
            docker = redis.container.get_wrapped_container()
            docker.pause()
            try:
                down = [client.get(f"/collections/c{n}/stats") for n in range(7)]  # past the breaker's 5
            finally:
                docker.unpause()
            back = client.get("/collections/c7/stats")

    assert {(r.status_code, r.json()["type"], r.headers["retry-after"]) for r in down} == {
        (503, PROBLEM + "shared-state-unavailable", "1")
    }
    assert back.status_code == 200  # no circuit opened against YouTube
    assert back.json() == expected_stats(new_videos(70, 3))
