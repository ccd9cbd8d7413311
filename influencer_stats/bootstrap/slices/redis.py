"""Slice ``redis``: the shared Redis client (one server, Sentinel, Cluster) and the store on it (``--store redis``).

The client is one resource every Redis builder shares (``redis``: opened on first use, closed
last, traced by what the ``tracing`` slot built, its ``/readyz`` check ``redis``), and where each
keeps its keys (``redis_keys``: on a Cluster the videos spread over ``CLUSTER_VIDEO_SHARDS``
slots). Its entry ``redis`` in the core's ``store`` slot keeps the collections there, waiting for
``INFLUENCER_STATS_REDIS_WAIT_REPLICAS`` replicas when set (then ``/readyz`` checks
``redis-replicas`` too). The other slices' Redis entries are theirs and this slice's only
together: the joints ``history__redis``, ``redis__sources``, ``redis__stats_cache``,
``redis__video_cache`` and ``quota__redis`` (``slice.Joint``), removed with either slice. The
Redis settings stay core, as every setting only a slice reads does for now.

Without this slice no entry needs Redis: the ``redis`` package is never imported, and profiles
naming a Redis choice (``distributed``) are not offered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from influencer_stats.bootstrap.slices.slice import Slice
from influencer_stats.bootstrap.stores import STORES

if TYPE_CHECKING:
    from influencer_stats.algebras import CollectionStore
    from influencer_stats.bootstrap.wiring import Resources, Wiring
    from influencer_stats.interpreters.redis_keys import RedisKeys
    from influencer_stats.interpreters.redis_topology import RedisClient

SLICE = Slice(
    "redis",
    "the shared Redis client (one server, Sentinel, Cluster) and the store on it (--store redis)",
    files=(
        "influencer_stats/interpreters/redis_topology.py",
        "influencer_stats/interpreters/redis_faults.py",
        "influencer_stats/interpreters/redis_keys.py",
        # The claims of an interval in Redis: the history's and the sources' joints both use it.
        "influencer_stats/interpreters/redis_interval_claims.py",
        "influencer_stats/interpreters/collections/redis_store.py",
        "tests/unit/test_redis_faults.py",
        "tests/unit/test_redis_keys.py",
        "tests/unit/test_redis_config.py",
        "tests/redis_topologies.py",
        "tests/redis_sentinel_set.py",
        "tests/redis_cluster_nodes.py",
        "tests/integration/test_redis_cluster.py",
        "tests/integration/test_redis_operations.py",
        "tests/integration/test_redis_topologies.py",
        "tests/integration/test_failover.py",
        "tests/integration/test_distributed.py",
        "tests/integration/resetting_relay.py",
        "tests/integration/test_pagination_redis.py",
        # The deployment of several replicas behind nginx: each answers any request from the
        # collections in Redis (without a store every replica shares, the other one answers 404).
        "compose.yaml",
        "compose.host.yaml",
        "tests/unit/test_compose_file.py",
        "tests/integration/test_compose.py",
        "tests/integration/test_deployment.py",
        # The distributed profile on Kubernetes: pods on Redis, scaled by an autoscaler.
        "deploy/kubernetes/distributed",
        "tests/unit/test_kubernetes_distributed.py",
        "tests/integration/test_kubernetes_distributed_pod.py",
        # The labs of Redis alone: its commands per request, what a durable write costs.
        "perf/redis_commands.py",
        "perf/bench_durability.py",
    ),
    modules=(
        "influencer_stats.interpreters.redis_topology",
        "influencer_stats.interpreters.redis_faults",
        "influencer_stats.interpreters.redis_keys",
        "influencer_stats.interpreters.redis_interval_claims",
        "influencer_stats.interpreters.collections.redis_store",
        "influencer_stats.bootstrap.slices.redis",
        "tests.redis_topologies",
        "tests.redis_sentinel_set",
        "tests.redis_cluster_nodes",
        "tests.integration.resetting_relay",
    ),
)

#: The slots a Cluster's video cache spreads over (each with its stale queue): enough that
#: every shard of a Cluster of up to a dozen primaries holds some (16,384 slots in all).
CLUSTER_VIDEO_SHARDS: Final = 48


async def redis(resources: Resources) -> RedisClient:
    """The one shared redis-py client (bounded, blocking pool; a timeout on every call): opened
    on first use, so a profile without Redis never imports it; closed last, checked by ``/readyz``."""
    return await resources.once("redis", lambda: _open(resources))


def redis_keys(resources: Resources) -> RedisKeys:
    """Where every Redis interpreter keeps its data: on a Cluster the videos spread over
    ``CLUSTER_VIDEO_SHARDS`` slots; elsewhere in one (the layout before Cluster support)."""
    from influencer_stats.interpreters.redis_keys import RedisKeys

    shards = CLUSTER_VIDEO_SHARDS if resources.settings.redis_cluster else 1
    return RedisKeys(resources.settings.redis_prefix, video_shards=shards)


async def _open(resources: Resources) -> RedisClient:
    from influencer_stats.interpreters import redis_topology as topology
    from influencer_stats.interpreters.redis_faults import REDIS_FAULTS

    settings = resources.settings
    url, connections, timeout_s = (
        settings.redis_url.value,
        settings.redis_connections,
        settings.redis_timeout_s,
    )
    client: RedisClient
    if settings.redis_cluster:  # not traced: RedisCluster has no span layer
        client = topology.cluster(settings.redis_cluster, url, connections=connections, timeout_s=timeout_s)
    elif settings.redis_sentinels:
        master = settings.redis_master
        client = resources.tracing.redis(
            topology.sentinel(
                settings.redis_sentinels, master, url, connections=connections, timeout_s=timeout_s
            )
        )
    else:
        client = resources.tracing.redis(
            topology.standalone(url, connections=connections, timeout_s=timeout_s)
        )
    resources.exits.push_async_callback(topology.close, client)

    async def ping() -> bool:
        try:
            return bool(await client.ping())
        except REDIS_FAULTS:
            return False

    resources.checks["redis"] = ping
    return client


@STORES.add(
    "redis",
    "shared by every worker and host (REDIS_URL)",
    ready=("redis",),
    needs=("redis",),
    shared=True,
    bumps_versions=True,
)
async def _redis(wiring: Wiring) -> CollectionStore:
    from influencer_stats.interpreters.collections.redis_store import RedisCollectionStore

    settings = wiring.settings
    store = RedisCollectionStore(
        await redis(wiring),
        redis_keys(wiring),
        wait_replicas=settings.redis_wait_replicas,
        wait_ms=max(
            1, round(1000 * settings.redis_timeout_s / 2)
        ),  # WAIT ends well before the call's timeout
    )
    if settings.redis_wait_replicas:  # a check the setting adds (not declared: none by default)
        wiring.checks["redis-replicas"] = store.replicated
    return store
