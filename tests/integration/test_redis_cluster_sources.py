"""The kept sources on a real Redis Cluster (three shards): a source kept with the revision a
``replace_if`` gave, read and forgotten, for collections of every slot.

The cluster and its client are test_redis_cluster.py's fixtures.
"""

from __future__ import annotations

from redis.asyncio.cluster import RedisCluster
from returns.result import Success

from influencer_stats.domain.models import CollectionId, CollectionSource, KeptSource, VideoId
from influencer_stats.interpreters.collections.redis_store import RedisCollectionStore
from influencer_stats.interpreters.redis_keys import RedisKeys
from influencer_stats.interpreters.sources.redis import RedisCollectionSources
from tests.integration.test_redis_cluster import client, keys, topology

__all__ = ["client", "keys", "topology"]  # the fixtures this module's tests take


async def test_the_kept_sources_run_on_every_slot(client: RedisCluster, keys: RedisKeys) -> None:
    store = RedisCollectionStore(client, keys, wait_replicas=0, wait_ms=250)
    sources = RedisCollectionSources(client, keys, claim_keep_s=60.0)
    ids = [CollectionId(f"r{n:03d}") for n in range(40)]  # spread over every shard
    source = CollectionSource("playlist", "PL1")

    for i in ids:
        read = (await store.save(i, ())).unwrap().revision
        replaced = (await store.replace_if(i, (VideoId("dQw4w9WgXcQ"),), read)).unwrap()
        assert await sources.put(i, KeptSource(source, replaced.revision)) == Success(None)
        assert await sources.get(i) == Success(KeptSource(source, replaced.revision))
        assert await sources.forget_if(i, replaced.revision) == Success(None)
        assert await sources.get(i) == Success(None)
