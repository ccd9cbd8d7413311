"""The per-video cache's Redis parts on a real Redis Cluster (three shards): entries, stale queue
and claims spread over every video shard, each shard's scripts run on its own slot.

The cluster and its client are test_redis_cluster.py's fixtures.
"""

from __future__ import annotations

from redis.asyncio.cluster import RedisCluster

from influencer_stats.bootstrap.slices.redis import CLUSTER_VIDEO_SHARDS
from influencer_stats.domain.models import VideoEntry, VideoId
from influencer_stats.interpreters.redis_keys import RedisKeys
from influencer_stats.interpreters.video_cache.video_cache_redis import (
    RedisMissClaims,
    RedisStaleQueue,
    RedisVideoEntries,
)
from influencer_stats.interpreters.videos.synthetic import synthetic_stats
from influencer_stats.testing.event_log import CapturingEventLog
from tests.integration.test_redis_cluster import FRESH, NOW, client, keys, topology

__all__ = ["client", "keys", "topology"]  # the fixtures this module's tests take


async def test_the_video_cache_spreads_over_every_shard_and_its_scripts_run_on_each(
    client: RedisCluster, keys: RedisKeys
) -> None:
    ids = [VideoId(f"{n:011d}") for n in range(200)]
    entries = RedisVideoEntries(client, keys.video, 60_000, CapturingEventLog(), decoded=100)
    await entries.put_many({i: VideoEntry(synthetic_stats(i), NOW - 15) for i in ids})  # stale
    queue = RedisStaleQueue(client, keys, 50, 60_000, CapturingEventLog())
    one = RedisMissClaims(client, keys, "one", 2_000, CapturingEventLog())
    other = RedisMissClaims(client, keys, "other", 2_000, CapturingEventLog())

    assert len({keys.video_shard(i) for i in ids}) == CLUSTER_VIDEO_SHARDS
    assert await entries.get_many(ids) == {i: VideoEntry(synthetic_stats(i), NOW - 15) for i in ids}
    assert await queue.push(ids, NOW, FRESH) == []  # no shard holds 50
    taken = await queue.take(50, NOW, FRESH)
    rest, left = await queue.take_due(NOW, NOW, FRESH)
    assert len(taken) == 50 and not left and sorted([*taken, *rest]) == sorted(ids)
    assert await one.claim(ids[:100], NOW, FRESH) == []
    assert sorted(await other.claim(ids, NOW, FRESH)) == sorted(ids[:100])
    await one.release(ids)
    assert await other.settled(ids[:100]) == {i: VideoEntry(synthetic_stats(i), NOW - 15) for i in ids[:100]}
