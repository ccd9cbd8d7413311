"""Slice ``stats_cache``: the stats caches, the ``cache`` slot's wrappers of the stats query.

``stats`` keeps answers in process (TTL, single-flight, stale-while-revalidate, stale-if-error,
LRU); with the ``redis`` slice (the joint ``redis__stats_cache``) ``redis`` keeps them in Redis
for every worker and host (versioned: read-your-writes), ``near`` in process in front of Redis,
kept correct by Redis's invalidations (``CLIENT TRACKING``). Their interpreters are
``interpreters/stats_cache``; what the core keeps of them is
``interpreters/stats/cache.py`` (``CachePolicy``, ``InvalidatingStore``). Without this slice the
slot keeps ``none`` (the use case answers every request) and the profiles naming a stats cache
are not offered.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from influencer_stats.algebras import CollectionStatsQuery
from influencer_stats.bootstrap.slices.slice import Slice
from influencer_stats.bootstrap.stats import STATS_WRAPPERS
from influencer_stats.bootstrap.wiring import Wiring

if TYPE_CHECKING:
    from influencer_stats.interpreters.stats.cache import CachePolicy

SLICE = Slice(
    "stats_cache",
    "the stats caches: in process (--cache stats), in Redis (redis), near (near,redis)",
    files=(
        "influencer_stats/interpreters/stats_cache",
        "tests/unit/test_stats_cache.py",
        "tests/contract/test_stats_caches.py",
        "tests/unit/test_stats_cache_config.py",
        "tests/integration/test_cache_e2e.py",
        "tests/integration/test_stats_cache_metrics.py",
        "tests/integration/test_upstream_counts.py",
    ),
    modules=("influencer_stats.interpreters.stats_cache", "influencer_stats.bootstrap.slices.stats_cache"),
)


def policy(wiring: Wiring) -> CachePolicy:
    """The stats caches' policy the settings ask for (every cache's, the joint's with Redis too)."""
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
    from influencer_stats.interpreters.stats_cache.cache import CachedStats

    return CachedStats(inner, time.monotonic, wiring.log, policy(wiring), wiring.metrics)
