"""The quota count on a real Redis Cluster (three shards), through the client the root builds: one
count per day for every client, its script's keys in one slot (``RedisKeys.quota``)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator

import pytest
from redis.asyncio.cluster import RedisCluster

from influencer_stats.bootstrap.slices.redis import CLUSTER_VIDEO_SHARDS
from influencer_stats.interpreters.quota.quota_redis import RedisQuotaLedger
from influencer_stats.interpreters.redis_keys import RedisKeys
from influencer_stats.interpreters.redis_topology import cluster
from influencer_stats.testing.event_log import CapturingEventLog
from tests.redis_cluster_nodes import ClusterTopology, redis_cluster
from tests.shared_redis import unique_prefix


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


async def test_the_quota_count_is_one_for_every_client(client: RedisCluster) -> None:
    keys = RedisKeys(unique_prefix(), video_shards=CLUSTER_VIDEO_SHARDS)
    ledger = RedisQuotaLedger(client, keys.quota, CapturingEventLog(), time.time, hold_s=3.0)

    spent = [await ledger.take("2026-12-04", 3, 60) for _ in range(4)]

    assert [s.value_or("spent") for s in spent] == [1, 2, 3, "spent"]
