"""The ``cache`` slot: wrappers of the stats query (``CollectionStatsQuery``).

The base is always the use case itself (``logic.service.GetStats`` over the
store and the video source); these wrap it. Every write reaches them through
``InvalidatingStore``, which the root puts around the store whatever the
wrappers, so a new cache cannot miss an invalidation.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from influencer_stats.algebras import CollectionStatsQuery
from influencer_stats.bootstrap.registry import Registry
from influencer_stats.bootstrap.stores import STORES
from influencer_stats.bootstrap.wiring import Wiring
from influencer_stats.domain.models import CollectionId
from influencer_stats.settings import Settings

if TYPE_CHECKING:
    from influencer_stats.interpreters.stats.cache import CachePolicy

StatsWrapper = Callable[[Wiring, CollectionStatsQuery], Awaitable[CollectionStatsQuery]]
STATS_WRAPPERS: Registry[StatsWrapper] = Registry("cache")


def _policy(wiring: Wiring) -> CachePolicy:
    from influencer_stats.interpreters.stats.cache import CachePolicy

    settings = wiring.settings
    return CachePolicy(
        ttl_s=settings.cache_ttl_s,
        stale_while_revalidate_s=settings.cache_stale_while_revalidate_s,
        stale_if_error_s=settings.cache_stale_if_error_s,
        max_entries=settings.cache_max_entries,
    )


@STATS_WRAPPERS.add(
    "stats",
    "in process: TTL, single-flight, stale-while-revalidate, stale-if-error, LRU",
    # A write through another worker would not invalidate it: stale answers after a write.
    per_process=("cached stats", "--cache redis, or none"),
    scenario="repeated",
)
async def _in_process(wiring: Wiring, inner: CollectionStatsQuery) -> CollectionStatsQuery:
    from influencer_stats.interpreters.stats.cache import CachedStats

    return CachedStats(inner, time.monotonic, wiring.log, _policy(wiring), wiring.metrics)


@STATS_WRAPPERS.add(
    "redis",
    "shared by workers and hosts through Redis, versioned (read-your-writes)",
    ready=("redis",),
    needs=("redis",),
    bumps_versions=True,
    scenario="repeated",
)
async def _redis(wiring: Wiring, inner: CollectionStatsQuery) -> CollectionStatsQuery:
    from influencer_stats.interpreters.stats.redis_cache import RedisCachedStats

    # Wall-clock time: entries are shared by processes and hosts.
    return RedisCachedStats(
        inner,
        await wiring.redis(),
        time.time,
        wiring.log,
        _policy(wiring),
        wiring.metrics,
        wiring.redis_keys(),
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
    from influencer_stats.interpreters.stats.near_cache import NearCachedStats
    from influencer_stats.interpreters.stats.tracking import KeyTracking

    settings, client, keys = wiring.settings, await wiring.redis(), wiring.redis_keys()
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
        _policy(wiring),
        wiring.metrics,
    )
    await tracking.connect()  # live from the first request if Redis answers now
    wiring.background(tracking.run(), "near-cache:tracking")
    return near
