"""Joint ``redis__stats_cache``: the stats caches on Redis (``--cache redis``, ``near,redis``).

The ``redis`` slice's and the ``stats_cache`` slice's only together (``slice.Joint``): loaded
while both are installed, removed with either. ``redis`` caches answers in Redis for every worker
and host (versioned: read-your-writes); ``near`` keeps them in process in front of Redis, kept
correct by Redis's invalidations (``CLIENT TRACKING``).
"""

from __future__ import annotations

import time

from influencer_stats.algebras import CollectionStatsQuery
from influencer_stats.bootstrap.slices.redis import redis, redis_keys
from influencer_stats.bootstrap.slices.slice import Joint
from influencer_stats.bootstrap.slices.stats_cache import policy
from influencer_stats.bootstrap.stats import STATS_WRAPPERS
from influencer_stats.bootstrap.stores import STORES
from influencer_stats.bootstrap.wiring import Wiring
from influencer_stats.domain.models import CollectionId
from influencer_stats.settings import Settings

JOINT = Joint(
    ("redis", "stats_cache"),
    "the stats caches on Redis: shared (--cache redis), near (near,redis)",
    files=(
        "influencer_stats/interpreters/stats_cache/redis_cache.py",
        "influencer_stats/interpreters/stats_cache/near_cache.py",
        "influencer_stats/interpreters/stats_cache/tracking.py",
        "tests/unit/test_near_cache.py",
        "tests/unit/test_stats_cache_redis_config.py",
        "tests/integration/test_redis_cache.py",
        "tests/integration/redis_cache_support.py",
        "tests/integration/test_near_cache.py",
        "tests/integration/test_stats_cache_cluster.py",
        "tests/integration/test_declared_effects.py",
        "tests/integration/test_distributed_caches.py",
    ),
    modules=(
        "influencer_stats.interpreters.stats_cache.redis_cache",
        "influencer_stats.interpreters.stats_cache.near_cache",
        "influencer_stats.interpreters.stats_cache.tracking",
        "influencer_stats.bootstrap.slices.redis__stats_cache",
        "tests.integration.redis_cache_support",
    ),
)


@STATS_WRAPPERS.add(
    "redis",
    "shared by workers and hosts through Redis, versioned (read-your-writes)",
    ready=("redis",),
    needs=("redis",),
    bumps_versions=True,
    scenario="repeated",
)
async def _redis(wiring: Wiring, inner: CollectionStatsQuery) -> CollectionStatsQuery:
    from influencer_stats.interpreters.stats_cache.redis_cache import RedisCachedStats

    # Wall-clock time: entries are shared by processes and hosts.
    return RedisCachedStats(
        inner,
        await redis(wiring),
        time.time,
        wiring.log,
        policy(wiring),
        wiring.metrics,
        redis_keys(wiring),
    )


def _near_needs(settings: Settings) -> str | None:
    if settings.redis_url.value.startswith("rediss://"):
        return "reads Redis's invalidations on a plain connection: not over TLS (REDIS_URL is rediss://)"
    return None


@STATS_WRAPPERS.add(
    "near",
    "in process, in front of Redis, kept correct by Redis's invalidations (CLIENT TRACKING): hits without a round trip",
    ready=("redis",),
    needs=("redis",),
    check=_near_needs,
    scenario="repeated",
)
async def _near(wiring: Wiring, inner: CollectionStatsQuery) -> CollectionStatsQuery:
    from influencer_stats.interpreters.redis_topology import credentials, primaries
    from influencer_stats.interpreters.stats_cache.near_cache import NearCachedStats
    from influencer_stats.interpreters.stats_cache.tracking import KeyTracking

    settings, client, keys = wiring.settings, await redis(wiring), redis_keys(wiring)
    version_prefix = keys.version("")[: -len("{}")]  # every collection's version key starts so
    near: NearCachedStats | None = None

    def forget(key: bytes) -> None:
        collection = key.decode(errors="replace")[len(version_prefix) :].removeprefix("{").removesuffix("}")
        if near is not None:
            near.forget(CollectionId(collection))

    def forget_all() -> None:
        if near is not None:
            near.forget_all()

    tracking = KeyTracking(
        lambda: primaries(client),
        version_prefix,
        forget,
        forget_all,
        auth=credentials(settings.redis_url.value),
        lease_s=settings.redis_timeout_s,  # a frozen primary stops the near-cache within one Redis timeout
        retry_s=settings.redis_timeout_s,
        clock=time.monotonic,
        log=wiring.log,
    )
    cache = settings.choices["cache"]
    bumped_below = STORES[settings.choices.one("store")].bumps_versions or any(
        STATS_WRAPPERS[name].bumps_versions for name in cache[cache.index("near") + 1 :]
    )
    near = NearCachedStats(
        inner,
        None if bumped_below else client,  # the Redis store or cache bumps every version already
        keys.version,
        tracking.live,
        time.monotonic,
        wiring.log,
        policy(wiring),
        wiring.metrics,
    )
    await tracking.connect()  # live from the first request if Redis answers now
    wiring.background(tracking.run(), "near-cache:tracking")
    return near
