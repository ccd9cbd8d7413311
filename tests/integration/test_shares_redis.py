"""Each client's share counted in Redis (the joint ``redis__shares``): two service processes (two
hosts, or two workers) on one real Redis give a client one share between them, not one each."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.containers import redis_server
from tests.integration.test_hardening_upstream import PROBLEM, youtube_env
from tests.integration.test_shares import ask_new
from tests.integration.test_shares import double as double  # the fixture
from tests.support import SERVERS, profile_args, running_service


def test_two_processes_on_one_redis_give_a_client_one_share(double: str, tmp_path: Path) -> None:
    with redis_server() as redis:
        env = youtube_env(
            double,
            REDIS_URL=redis.url,
            INFLUENCER_STATS_SHARES="redis",  # the default where the quota is counted in Redis too
            INFLUENCER_STATS_SHARE="3/hour",
            INFLUENCER_STATS_SHARE_PROXIES="1",
        )
        argv = [*profile_args("youtube"), "--server", SERVERS[0]]
        with (
            running_service(argv, tmp_path / "one.log", env=env) as one,
            running_service(argv, tmp_path / "two.log", env=env) as two,
            httpx.Client(base_url=one.url, timeout=30) as first,
            httpx.Client(base_url=two.url, timeout=30) as second,
        ):
            spent = [ask_new(first, f"a{n}", 100 * n, "198.51.100.7").status_code for n in range(2)]
            elsewhere = ask_new(second, "b0", 1_000, "198.51.100.7")
            past = ask_new(first, "a2", 2_000, "198.51.100.7")
            other = ask_new(second, "c0", 3_000, "203.0.113.9").status_code

    assert spent == [200, 200]
    assert elsewhere.status_code == 200  # the third unit of the share, spent on the other process
    assert past.status_code == 429  # one share between them: each alone would have had one left
    assert past.json()["type"] == PROBLEM + "share-spent" and int(past.headers["retry-after"]) > 0
    assert other == 200
