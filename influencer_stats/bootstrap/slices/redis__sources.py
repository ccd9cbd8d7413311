"""Joint ``redis__sources``: the collections' sources in Redis (``--sources redis``), for every worker and host.

The ``redis`` slice's and the ``sources`` slice's only together (``slice.Joint``): loaded while
both are installed, removed with either. Its entry keeps each collection's source and claims in
the shared Redis (valid on a Cluster); the sources' own slot then follows a Redis store by
default (``same_as="store"``).
"""

from __future__ import annotations

from influencer_stats.algebras.sources import CollectionSources
from influencer_stats.bootstrap.slices.redis import redis, redis_keys
from influencer_stats.bootstrap.slices.slice import Joint
from influencer_stats.bootstrap.slices.sources import CLAIM_KEEP_S, SOURCES
from influencer_stats.bootstrap.wiring import Wiring

JOINT = Joint(
    ("redis", "sources"),
    "the collections' sources in Redis (--sources redis), for every worker and host",
    files=(
        "influencer_stats/interpreters/sources/redis.py",
        "tests/integration/test_redis_sources.py",
        "tests/integration/test_redis_cluster_sources.py",
        "tests/integration/test_sources_redis.py",
    ),
    modules=(
        "influencer_stats.interpreters.sources.redis",
        "influencer_stats.bootstrap.slices.redis__sources",
    ),
)


@SOURCES.add("redis", "shared by every worker and host (REDIS_URL)", ready=("redis",), needs=("redis",))
async def _redis(wiring: Wiring) -> CollectionSources:
    from influencer_stats.interpreters.sources.redis import RedisCollectionSources

    return RedisCollectionSources(await redis(wiring), redis_keys(wiring), CLAIM_KEEP_S)
