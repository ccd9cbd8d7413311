"""The collections' sources on Redis (the ``redis__sources`` joint): real services, real Redis and
the YouTube double as its own process.

- Two processes on one Redis refresh each collection once per interval between them.
- Refreshes racing PUTs of ids and DELETEs on Redis lose nothing, leave no orphan source key
  (the harness: ``test_source_races.py``).
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import httpx
from redis import Redis

from influencer_stats.interpreters.redis_keys import RedisKeys
from tests.containers import redis_server
from tests.integration.test_source_races import EVERY_REFRESH_READS, PREFIX, assert_nothing_lost, run_races
from tests.integration.test_source_races import youtube as youtube  # the fixture, delayed reads
from tests.integration.test_sources import VIDEOS, _env, _passes, _slots_both_passed
from tests.integration.test_sources import double as double  # the fixture
from tests.integration.youtube_clients_support import YouTubeDouble
from tests.support import profile_args, running_service, wait_for


def test_two_processes_on_one_redis_refresh_each_collection_once_per_interval(
    double: tuple[str, YouTubeDouble], tmp_path: Path
) -> None:
    url, youtube = double
    youtube.playlist("PLshared", VIDEOS[:3])
    every_second = _env(url, INFLUENCER_STATS_SOURCE_REFRESH_INTERVAL="1")
    with redis_server() as redis:
        env = {**every_second, "REDIS_URL": f"{redis.url}/6"}
        distributed = profile_args("distributed")
        with (
            running_service(distributed, tmp_path / "a.log", env=env) as a,
            running_service(distributed, tmp_path / "b.log", env=env) as b,
            httpx.Client(timeout=30) as http,
        ):
            assert http.put(f"{a.url}/collections/shared", json={"playlist": "PLshared"}).status_code == 201
            written = math.floor(time.time())
            assert wait_for(lambda: _slots_both_passed(tmp_path, written) >= 3, timeout=20)
            youtube.playlist("PLshared", VIDEOS[:5])
            assert wait_for(
                lambda: len(http.get(f"{b.url}/collections/shared").json()["videos"]) == 5, timeout=10
            )

    passes = _passes(tmp_path, written)
    both = {slot: seen for slot, seen in passes.items() if len(seen) == 2}
    assert all(len(seen) <= 2 for seen in passes.values()), passes  # each process once per interval
    for seen in both.values():  # between them, the one collection was refreshed once
        assert sorted(e["refreshed"] + e["taken_elsewhere"] for e in seen) == [1, 1], seen
        assert sum(e["refreshed"] for e in seen) == 1


def test_on_redis_no_refresh_overwrites_ids_or_outlives_a_delete(youtube: str, tmp_path: Path) -> None:
    with redis_server() as redis:
        env = {
            "YOUTUBE_API_URL": youtube,
            "YOUTUBE_API_KEY": "any",
            "REDIS_URL": f"{redis.url}/7",
            "INFLUENCER_STATS_REDIS_PREFIX": PREFIX,
            **EVERY_REFRESH_READS,
        }
        with running_service(profile_args("distributed"), tmp_path / "s.log", env=env) as service:
            counts = run_races(service.url)

        def orphans() -> int:
            keys = RedisKeys(PREFIX)
            client = Redis.from_url(f"{redis.url}/7")
            try:
                found = 0
                for key in client.scan_iter(match=f"{PREFIX}:source*", count=1_000):
                    collection = key.decode().partition("{")[2].rstrip("}")
                    found += not client.exists(keys.collection(collection))
                return found
            finally:
                client.close()

        assert_nothing_lost(counts, orphans)
