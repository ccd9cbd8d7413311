"""What the quota economy opened (issue 22) that is the budget's, on every server: real service
processes, real sockets, the YouTube double as its own process (the rest:
test_hardening_upstream.py; the count in Redis: test_quota_redis.py).

- Anonymous clients writing new ids and asking for their stats while every call fails (the
  day's budget spent): nothing is kept per id that could not be fetched, RSS stays flat (it grew
  56 → 454 MB in 25 s on starlette before).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from perf.procs import memory_of_tree
from tests.integration.test_hardening_upstream import BIG, PROBLEM, new_videos, youtube_env
from tests.support import SERVERS, profile_args, running_double_process, running_service


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
