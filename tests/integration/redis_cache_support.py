"""For ``test_redis_cache.py``: the policy, the collection, reading answers, awaiting computations."""

from __future__ import annotations

import asyncio

from returns.result import Result

from influencer_stats.domain.models import CacheInfo, CollectionId, StatsAnswer, StatsError
from influencer_stats.interpreters.stats.cache import CachePolicy
from influencer_stats.testing.stats_query import ScriptedStatsQuery as Inner

ONE = CollectionId("one")
POLICY = CachePolicy(ttl_s=10, stale_while_revalidate_s=30, stale_if_error_s=300, max_entries=10_000)


def impressions(result: Result[StatsAnswer, StatsError]) -> int:
    return result.unwrap().stats.impressions


def cache_info(result: Result[StatsAnswer, StatsError]) -> CacheInfo:
    info = result.unwrap().cache
    assert info is not None
    return info


async def settle() -> None:
    """Wait for the caches' computations in flight (background refreshes included)."""
    running = [t for t in asyncio.all_tasks() if t.get_name().startswith("stats:")]
    await asyncio.wait_for(asyncio.gather(*running), timeout=5)


async def started(inner: Inner, calls: int) -> None:
    """Wait until the inner query has been entered ``calls`` times (after the caches' Redis reads)."""
    async with asyncio.timeout(5), inner.called:
        await inner.called.wait_for(lambda: inner.calls >= calls)
