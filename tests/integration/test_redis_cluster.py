"""Every Redis interpreter on a real Redis Cluster (three shards), through the client the root builds.

On a Cluster a command or script naming keys of two slots fails (CROSSSLOT),
so each interpreter's keys are laid out by slot (``RedisKeys``): the keys of
one collection share one, the videos spread over ``CLUSTER_VIDEO_SHARDS``,
each with its claims and stale queue. What runs here is what a deployment
on a Cluster runs: the store with paging (the quota count: test_redis_cluster_quota.py; the video cache's
entries, queue and claims: test_redis_cluster_video_cache.py; the kept sources: test_redis_cluster_sources.py; the stats caches:
test_stats_cache_cluster.py; failover under load: test_failover.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import pytest
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from returns.result import Failure, Success

from influencer_stats.bootstrap.slices.redis import CLUSTER_VIDEO_SHARDS
from influencer_stats.domain.models import (
    CollectionId,
    Created,
    Replaced,
    RevisionChanged,
    StoreUnavailable,
    VideoId,
)
from influencer_stats.interpreters.collections.redis_store import RedisCollectionStore
from influencer_stats.interpreters.redis_keys import RedisKeys
from influencer_stats.interpreters.redis_topology import cluster, read_many
from tests.containers import redis_command
from tests.redis_cluster_nodes import ClusterTopology, redis_cluster
from tests.shared_redis import unique_prefix

NOW, FRESH = 1_700_000_000.0, 10.0


@pytest.fixture(scope="module")
def topology() -> Iterator[ClusterTopology]:
    with redis_cluster(replicas_per_primary=0) as started:
        yield started


@pytest.fixture
async def client(topology: ClusterTopology) -> AsyncIterator[RedisCluster]:
    node = topology.nodes[0]
    redis = cluster([(node.host, node.port)], "redis://", connections=16, timeout_s=2.0)
    yield redis
    await redis.aclose()


@pytest.fixture
def keys() -> RedisKeys:
    return RedisKeys(unique_prefix(), video_shards=CLUSTER_VIDEO_SHARDS)


async def test_the_store_saves_replaces_lists_in_pages_and_deletes_collections_of_every_slot(
    client: RedisCluster, keys: RedisKeys
) -> None:
    store = RedisCollectionStore(client, keys, wait_replicas=0, wait_ms=250)
    ids = [CollectionId(f"c{n:03d}") for n in range(120)]  # spread over every shard
    videos = (VideoId("dQw4w9WgXcQ"),)

    assert {await store.save(i, videos) for i in ids} == {Success(Created())}
    assert await store.save(ids[0], ()) == Success(Replaced())
    pages, after = [], None
    while True:
        page = (await store.ids(after, 50)).unwrap()
        pages.append(page)
        if len(page) < 50:
            break
        after = page[-1]
    await store.delete(ids[1])

    assert [len(p) for p in pages] == [50, 50, 20] and [i for p in pages for i in p] == ids
    assert (await store.get(ids[2])).unwrap().videos == videos
    assert (await store.get(ids[0])).unwrap().videos == ()
    assert (await store.ids(None, 1000)).unwrap() == (ids[0], *ids[2:])


async def test_replace_if_runs_on_every_slot(client: RedisCluster, keys: RedisKeys) -> None:
    store = RedisCollectionStore(client, keys, wait_replicas=0, wait_ms=250)
    ids = [CollectionId(f"r{n:03d}") for n in range(40)]  # spread over every shard

    for i in ids:
        read = (await store.save(i, ())).unwrap().revision
        replaced = (await store.replace_if(i, (VideoId("dQw4w9WgXcQ"),), read)).unwrap()
        assert await store.replace_if(i, (), read) == Failure(RevisionChanged(i))
        assert (await store.get(i)).unwrap().revision == replaced.revision


async def test_a_durable_write_waits_for_no_replica_a_shard_lacks_and_says_so(
    client: RedisCluster, keys: RedisKeys
) -> None:
    store = RedisCollectionStore(client, keys, wait_replicas=1, wait_ms=50)  # this Cluster has none

    saved = await store.save(CollectionId("d"), ())

    assert saved.failure() == StoreUnavailable("redis: NotReplicated")


async def test_more_calls_at_once_than_a_node_has_connections_wait_their_turn(
    topology: ClusterTopology, keys: RedisKeys
) -> None:
    node = topology.nodes[0]
    narrow = cluster([(node.host, node.port)], "redis://", connections=2, timeout_s=2.0)
    names = [f"{keys.prefix}:n{n}" for n in range(60)]  # every shard
    try:
        counted = await asyncio.gather(*(narrow.incr(name) for name in names))
        read = await asyncio.gather(*(read_many(narrow, names) for _ in range(20)))
    finally:
        await narrow.aclose()

    assert counted == [1] * len(names)  # redis-py alone: MaxConnectionsError past two per node
    assert read == [[b"1"] * len(names)] * 20


async def test_the_replicas_check_fails_while_a_shard_has_fewer_replicas_than_a_write_waits_for(
    client: RedisCluster, keys: RedisKeys
) -> None:
    durable = RedisCollectionStore(client, keys, wait_replicas=1, wait_ms=50)  # this Cluster has none
    plain = RedisCollectionStore(client, keys, wait_replicas=0, wait_ms=50)

    assert (await durable.replicated(), await plain.replicated()) == (False, True)


async def test_connections_every_node_closed_are_opened_afresh_before_the_next_command_with_no_retry(
    client: RedisCluster, keys: RedisKeys, topology: ClusterTopology
) -> None:
    names = [f"{keys.prefix}:r{n}" for n in range(60)]  # every shard
    # One at a time: a fresh client's first calls at once race its learning the slot map (redis-py
    # closes the connections of the startup nodes it replaces, under calls still using them).
    assert [await client.incr(name) for name in names] == [1] * len(names)
    client.retry = Retry(NoBackoff(), 0)  # no retry across a failover to hide a failed call
    opened = [c for node in client.get_nodes() for c in node._connections if c.is_connected]
    assert opened

    for node in topology.nodes:  # as a restart of every node does to the connections kept
        redis_command(node.host, node.port, "CLIENT", "KILL", "TYPE", "normal")
    for _ in range(1_000):  # bounded: until the loop has read each connection's end
        if all(c._reader is None or c._reader.at_eof() for c in opened):
            break
        await asyncio.sleep(0.001)

    assert await asyncio.gather(*(client.incr(name) for name in names)) == [2] * len(names)
