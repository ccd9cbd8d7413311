"""The stats caches on a real Redis Cluster (three shards), through the client the root builds
(the ``stats_cache`` slice's part of test_redis_cluster.py): the shared stats cache versions its
entries on any shard, the near-cache's tracking hears every primary."""

from __future__ import annotations

import asyncio

from redis.asyncio.cluster import RedisCluster

from influencer_stats.domain.models import CollectionId
from influencer_stats.interpreters.metrics.noop import NoMetrics
from influencer_stats.interpreters.redis_keys import RedisKeys
from influencer_stats.interpreters.redis_topology import primaries
from influencer_stats.interpreters.stats.cache import CachePolicy
from influencer_stats.interpreters.stats_cache.redis_cache import RedisCachedStats
from influencer_stats.interpreters.stats_cache.tracking import KeyTracking
from influencer_stats.testing.clock import ManualClock
from influencer_stats.testing.event_log import CapturingEventLog
from influencer_stats.testing.stats_query import ScriptedStatsQuery, stats_of
from tests.integration.test_redis_cluster import NOW, client, keys, topology
from tests.redis_cluster_nodes import ClusterTopology

__all__ = ["client", "keys", "topology"]  # the fixtures this module's tests take (test_redis_cluster.py's)

POLICY = CachePolicy(ttl_s=60, stale_while_revalidate_s=0, stale_if_error_s=0, max_entries=100)


async def test_the_shared_stats_cache_serves_and_versions_entries_on_any_shard(
    client: RedisCluster, keys: RedisKeys
) -> None:
    inner = ScriptedStatsQuery()
    cache = RedisCachedStats(inner, client, ManualClock(NOW), CapturingEventLog(), POLICY, NoMetrics(), keys)
    ids = [CollectionId(f"s{n}") for n in range(6)]

    for i in ids:
        assert (await cache.stats(i)).unwrap().stats == (await cache.stats(i)).unwrap().stats == stats_of(1)
    await cache.invalidate(ids[0])
    inner.version = 2

    assert inner.calls == len(ids)
    assert (await cache.stats(ids[0])).unwrap().stats == stats_of(2)


async def test_the_near_cache_tracks_every_primary_and_hears_a_version_bumped_on_each(
    client: RedisCluster, keys: RedisKeys, topology: ClusterTopology
) -> None:
    heard: list[bytes] = []
    prefix = keys.version("")[: -len("{}")]
    tracked = KeyTracking(
        lambda: primaries(client),
        prefix,
        heard.append,
        lambda: None,
        auth=[],
        lease_s=2.0,
        retry_s=2.0,
        clock=ManualClock(),
        log=CapturingEventLog(),
    )
    ids = [f"v{n}" for n in range(30)]
    try:
        assert await tracked.connect()
        for i in ids:
            await client.incr(keys.version(i))
        for _ in range(1_000):
            if tracked.live() and len(heard) == len(ids):
                break
            await asyncio.sleep(0.001)
    finally:
        tracked.close()

    assert len(await primaries(client)) == len(topology.primaries()) == 3
    assert sorted(heard) == sorted(keys.version(i).encode() for i in ids)
