"""What each registered stats cache is for: the scenario its entry names (``Entry.scenario``),
run against an inner query made for it, and an answer from cached data kept, not recomputed.

The ``stats_cache`` slice's suite (the core registers no cache); the contract every cache keeps
with the computed query is tests/contract/test_stats_query.py's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from influencer_stats.algebras import CollectionStatsQuery
from influencer_stats.bootstrap.registry import Entry
from influencer_stats.bootstrap.stats import STATS_WRAPPERS, StatsWrapper
from influencer_stats.domain.models import CacheInfo, CollectionId
from influencer_stats.testing.stats_query import ScriptedStatsQuery, stats_of
from tests.contract.wired import wired

ONE = CollectionId("one")


Wrap = Callable[[CollectionStatsQuery], Awaitable[CollectionStatsQuery]]


async def _repeated(wrap: Wrap) -> None:
    """The same collection asked for twice: the inner query computes it once, and both answers agree."""
    inner = ScriptedStatsQuery()
    query = await wrap(inner)
    first, second = await query.stats(ONE), await query.stats(ONE)

    assert first.unwrap().stats == second.unwrap().stats == stats_of(1)
    assert inner.calls == 1


SCENARIOS = {"repeated": _repeated}


@pytest.mark.parametrize("wrapper", list(STATS_WRAPPERS), ids=STATS_WRAPPERS.names())
async def test_each_cache_does_what_it_is_for_in_the_scenario_its_entry_names(
    wrapper: Entry[StatsWrapper], tmp_path: Path
) -> None:
    scenario = SCENARIOS.get(wrapper.scenario or "")
    assert scenario is not None, f"{wrapper.name!r} names no scenario of this suite: {', '.join(SCENARIOS)}"
    async with asyncio.timeout(10), wired(tmp_path, {"cache": wrapper.name}) as wiring:
        await scenario(lambda inner: wrapper.build(wiring, inner))


@pytest.mark.parametrize("wrapper", list(STATS_WRAPPERS), ids=STATS_WRAPPERS.names())
async def test_an_answer_from_cached_data_older_than_the_ttl_is_kept_not_recomputed(
    wrapper: Entry[StatsWrapper], tmp_path: Path
) -> None:
    """Videos an hour old and fresh below for another hour: the answer is a fresh hit that says
    their age (it was stale from birth, and every request recomputed it: perf/RESULTS.md)."""
    inner = ScriptedStatsQuery()
    inner.below = CacheInfo(True, 3600.0, 3600.0)
    async with asyncio.timeout(10), wired(tmp_path, {"cache": wrapper.name}) as wiring:
        query = await wrapper.build(wiring, inner)
        await query.stats(ONE)
        again = (await query.stats(ONE)).unwrap()
        await asyncio.sleep(0)

    assert again.cache is not None
    assert (again.cache.hit, again.cache.stale_reason) == (True, None)
    assert again.cache.age_s >= 3600
    assert inner.calls == 1
