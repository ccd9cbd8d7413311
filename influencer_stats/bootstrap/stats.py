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
from influencer_stats.bootstrap.wiring import Wiring

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
