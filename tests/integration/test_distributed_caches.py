"""The ``distributed`` profile's stats caches: worker processes sharing one real Redis (the
``stats_cache`` slice's part of test_distributed.py).

- Two services on two ports agree on every collection and statistic after
  writes through either (read-your-writes across processes), over the Redis
  stats cache and the near-cache in front of it.
- With the near-cache, a lost tracking connection never serves an answer from
  before a write.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.containers import redis_command, redis_server
from tests.integration.test_distributed import FAKE_VIDEOS, videos_of
from tests.support import expected_stats, profile_args, running_service, wait_for


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    """One Redis for the module; each test uses its own database number."""
    with redis_server() as redis:
        yield redis.url


@pytest.mark.parametrize("cache", ["redis", "near,redis"])
def test_two_workers_on_one_redis_agree_after_every_write_through_either(
    redis_url: str, tmp_path: Path, cache: str
) -> None:
    database = 1 if cache == "redis" else 3
    env = {**FAKE_VIDEOS, "REDIS_URL": f"{redis_url}/{database}"}
    distributed = [*profile_args("distributed"), "--cache", cache]
    with (
        running_service(distributed, tmp_path / "a.log", env=env) as a,
        running_service(distributed, tmp_path / "b.log", env=env) as b,
        httpx.Client(timeout=10) as http,
    ):
        previous: dict[str, object] = {}
        for n in range(1, 21):
            writer, reader = (a, b) if n % 2 else (b, a)
            videos = videos_of(n)

            put = http.put(f"{writer.url}/collections/shared", json={"videos": videos})
            read = http.get(f"{reader.url}/collections/shared/stats")
            again = http.get(f"{writer.url}/collections/shared/stats")

            assert put.status_code == (201 if n == 1 else 200)
            assert read.json() == again.json() == expected_stats(videos) != previous
            assert read.headers["cache-status"] == "influencer-stats; fwd=miss; stored"
            assert again.headers["cache-status"].startswith("influencer-stats; hit;")  # one shared cache
            assert http.get(f"{reader.url}/collections/shared").json() == {"videos": videos}
            previous = read.json()

        http.put(f"{b.url}/collections/other", json={"videos": []})
        assert http.get(f"{a.url}/collections").json() == {"ids": ["other", "shared"]}
        assert http.delete(f"{a.url}/collections/shared").status_code == 204
        assert http.get(f"{b.url}/collections/shared/stats").status_code == 404
        assert http.get(f"{b.url}/collections").json() == {"ids": ["other"]}


def test_with_the_near_cache_a_lost_tracking_connection_never_serves_an_answer_from_before_a_write(
    redis_url: str, tmp_path: Path
) -> None:
    env = {**FAKE_VIDEOS, "REDIS_URL": f"{redis_url}/4"}
    near = [*profile_args("distributed"), "--cache", "near,redis"]
    with (
        running_service(near, tmp_path / "a.log", env=env) as a,
        running_service(near, tmp_path / "b.log", env=env) as b,
        httpx.Client(timeout=10) as http,
    ):
        http.put(f"{a.url}/collections/c", json={"videos": videos_of(1)})
        assert http.get(f"{b.url}/collections/c/stats").json() == expected_stats(videos_of(1))
        assert near_hits(http, b.url) == 0
        assert http.get(f"{b.url}/collections/c/stats").json() == expected_stats(videos_of(1))
        assert near_hits(http, b.url) == 1  # from b's memory

        host, port = redis_url.removeprefix("redis://").split(":")
        redis_command(host, int(port), "CLIENT", "KILL", "TYPE", "pubsub")  # every worker's tracking
        http.put(f"{a.url}/collections/c", json={"videos": videos_of(2)})

        assert http.get(f"{b.url}/collections/c/stats").json() == expected_stats(videos_of(2))
        assert wait_for(lambda: b.output().count('"event":"stats.tracking_started"') == 2, 10), b.output()
        for _ in range(2):  # kept again, then served from memory: tracking is back
            assert http.get(f"{b.url}/collections/c/stats").json() == expected_stats(videos_of(2))
        assert near_hits(http, b.url) == 2
        assert '"event":"stats.tracking_lost"' in b.output()


def near_hits(http: httpx.Client, url: str) -> int:
    """The near-cache hits a service has counted (its Prometheus metrics)."""
    for line in http.get(f"{url}/metrics").text.splitlines():
        if line.startswith('influencer_stats_cache_events_total{kind="near_hit"}'):
            return int(float(line.rsplit(" ", 1)[1]))
    return 0
