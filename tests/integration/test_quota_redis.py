"""The day's quota counted in Redis (the joint ``quota__redis``), on every server: real service
processes, real sockets, the YouTube double as its own process, a real Redis.

- The Redis quota count not answering is a 503 of its own (``shared-state-unavailable``) that
  leaves YouTube's circuit closed (a 502 that opened it for 5 s before).
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.containers import redis_server
from tests.integration.test_hardening_upstream import PROBLEM, new_videos, youtube_env
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
