"""The day's quota counted in Redis (the joint ``quota__redis``), on every server: real service
processes, real sockets, the YouTube double as its own process, a real Redis.

- The Redis quota count not answering is a 503 of its own (``shared-state-unavailable``) that
  leaves YouTube's circuit closed (a 502 that opened it for 5 s before).
- Redis restarted without persistence once two processes had spent most of the day's budget: the
  processes recount it from what each saw, and YouTube sees no more calls than the budget that
  day (it saw the budget twice before: budget 50, 100 calls).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from influencer_stats.domain.quota import YOUTUBE_DAY_S
from influencer_stats.interpreters.quota.quota import QuotaDay
from influencer_stats.interpreters.redis_keys import RedisKeys
from tests.containers import redis_command, redis_server
from tests.integration.test_hardening_upstream import PROBLEM, calls_made, new_videos, youtube_env
from tests.integration.test_quota_hardening import double as double  # the fixture
from tests.support import SERVERS, expected_stats, profile_args, running_service


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


BUDGET = 8
#: How long the recount may take at most, Redis's restart included (it holds spending 3 s).
RECOUNT_WITHIN_S = 30.0


def test_a_redis_restarted_without_persistence_lets_no_more_calls_than_the_budget_that_day(
    double: str, tmp_path: Path
) -> None:
    # On the core's server only: the count is the quota slice's, behind the edge of every server.
    argv = [*profile_args("youtube"), "--server", SERVERS[0]]
    with redis_server() as redis, ExitStack() as stack:
        env = youtube_env(
            double,
            REDIS_URL=redis.url,
            INFLUENCER_STATS_QUOTA="redis",
            INFLUENCER_STATS_QUOTA_PER_DAY=str(BUDGET),
        )
        clients = [
            stack.enter_context(httpx.Client(base_url=service.url, timeout=30))
            for service in (
                stack.enter_context(running_service(argv, tmp_path / f"svc{n}.log", env=env))
                for n in range(2)
            )
        ]
        asked = iter(range(1_000))

        def ask(client: httpx.Client) -> httpx.Response:
            """The stats of a new collection of one video never fetched: one call, one unit."""
            n = next(asked)
            assert client.put(f"/collections/r{n}", json={"videos": new_videos(n, 1)}).is_success
            return client.get(f"/collections/r{n}/stats")

        # Each process knows only part: the first spent 4, the second 2 (and saw 6).
        before = [ask(clients[0]).status_code for _ in range(4)] + [
            ask(clients[1]).status_code for _ in range(2)
        ]
        redis.container.get_wrapped_container().restart()  # --save "": the count is gone
        after = _until_both_refused_for_the_budget(clients, ask)
        today = QuotaDay(YOUTUBE_DAY_S).at(time.time())[0]
        count = redis_command(redis.host, redis.port, "HGET", RedisKeys("is").quota(today), "n")

    assert before == [200] * 6
    assert after.count(200) == BUDGET - 6  # what was left, and no more
    assert calls_made(double) == BUDGET
    assert count == str(BUDGET).encode()


def _until_both_refused_for_the_budget(
    clients: list[httpx.Client], ask: Callable[[httpx.Client], httpx.Response]
) -> list[int]:
    """Ask each process for new videos in turn until each answers that the day's budget is spent
    (503 ``shared-state-unavailable`` while Redis restarts and the count is recounted)."""
    statuses: list[int] = []
    exhausted: set[int] = set()
    deadline = time.monotonic() + RECOUNT_WITHIN_S
    while len(exhausted) < len(clients) and time.monotonic() < deadline:
        for n, client in enumerate(clients):
            reply = ask(client)
            statuses.append(reply.status_code)
            if reply.status_code == 503 and reply.json()["type"] == PROBLEM + "quota-exhausted":
                exhausted.add(n)
        time.sleep(0.2)  # a real Redis restarting: poll it, boundedly
    assert len(exhausted) == len(clients), (
        f"not refused for the budget within {RECOUNT_WITHIN_S} s: {statuses}"
    )
    return statuses
