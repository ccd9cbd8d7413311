"""The stats cache on a fake clock and a controllable inner query: no sleeps."""

from __future__ import annotations

import asyncio

import pytest
from returns.result import Failure, Result, Success

from influencer_stats.algebras import CacheMetrics
from influencer_stats.domain.models import (
    CacheInfo,
    CollectionId,
    CollectionNotFound,
    StatsAnswer,
    StatsError,
    UpstreamUnavailable,
    VideoId,
)
from influencer_stats.interpreters.collections.memory_dict import DictCollectionStore
from influencer_stats.interpreters.metrics.noop import NoMetrics
from influencer_stats.interpreters.stats.cache import CachePolicy, InvalidatingStore
from influencer_stats.interpreters.stats_cache.cache import CachedStats
from influencer_stats.testing.clock import ManualClock as Clock
from influencer_stats.testing.event_log import CapturingEventLog
from influencer_stats.testing.stats_query import ScriptedStatsQuery as Inner
from tests.support import RecordingMetrics

ONE = CollectionId("one")
POLICY = CachePolicy(ttl_s=10, stale_while_revalidate_s=30, stale_if_error_s=300, max_entries=3)


def make(inner: Inner, clock: Clock, metrics: CacheMetrics | None = None) -> CachedStats:
    return CachedStats(inner, clock, CapturingEventLog(), POLICY, metrics or NoMetrics())


def impressions(result: Result[StatsAnswer, StatsError]) -> int:
    return result.unwrap().stats.impressions


async def settle() -> None:
    """Let background tasks run to completion (they only await the inner query)."""
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_miss_computes_and_the_next_call_is_a_fresh_hit() -> None:
    inner, clock = Inner(), Clock()
    cache = make(inner, clock)

    first = await cache.stats(ONE)
    clock.now += 3
    second = await cache.stats(ONE)

    assert inner.calls == 1
    missed = first.unwrap().cache
    assert missed is not None
    assert missed.hit is False
    info = second.unwrap().cache
    assert info is not None
    assert (info.hit, info.age_s, info.ttl_s, info.stale_reason) == (True, 3, 7, None)


async def test_an_answer_from_data_older_than_the_ttl_is_fresh_for_the_ttl_and_says_the_datas_age() -> None:
    inner, clock = Inner(), Clock()
    inner.below = CacheInfo(True, 50.0, 250.0)  # videos 50 s old, fresh 250 s more below
    cache = make(inner, clock)

    await cache.stats(ONE)
    clock.now += 9
    kept = (await cache.stats(ONE)).unwrap().cache
    clock.now += 2
    expired = (await cache.stats(ONE)).unwrap().cache
    await settle()

    assert kept == CacheInfo(True, 59.0, 1.0)  # Age counts from the data, not the computation
    assert expired is not None and expired.stale_reason == "revalidating"
    assert inner.calls == 2  # one computation, one refresh after the TTL: not one per request


async def test_an_answer_is_fresh_no_longer_than_the_data_below_it() -> None:
    inner, clock = Inner(), Clock()
    inner.below = CacheInfo(True, 50.0, 4.0)
    cache = make(inner, clock)

    await cache.stats(ONE)
    clock.now += 3
    fresh = (await cache.stats(ONE)).unwrap().cache
    clock.now += 2
    stale = (await cache.stats(ONE)).unwrap().cache

    assert fresh == CacheInfo(True, 53.0, 1.0)
    assert stale is not None and stale.stale_reason == "revalidating"


async def test_an_answer_from_stale_data_is_stale_from_the_start() -> None:
    inner, clock = Inner(), Clock()
    inner.below = CacheInfo(True, 320.0, -20.0, "revalidating")
    cache = make(inner, clock)

    await cache.stats(ONE)
    again = (await cache.stats(ONE)).unwrap().cache

    assert again == CacheInfo(True, 320.0, 0.0, "revalidating")


async def test_concurrent_misses_share_one_computation() -> None:
    inner, clock = Inner(), Clock()
    inner.gate = asyncio.Event()
    cache = make(inner, clock)

    waiting = [asyncio.create_task(cache.stats(ONE)) for _ in range(100)]
    await settle()
    inner.gate.set()
    results = await asyncio.gather(*waiting)

    assert inner.calls == 1
    assert {impressions(r) for r in results} == {1}


async def test_a_caller_that_gives_up_does_not_cancel_the_computation_for_others() -> None:
    inner, clock = Inner(), Clock()
    inner.gate = asyncio.Event()
    cache = make(inner, clock)

    impatient = asyncio.create_task(cache.stats(ONE))
    patient = asyncio.create_task(cache.stats(ONE))
    await settle()
    impatient.cancel()
    inner.gate.set()

    assert impressions(await patient) == 1
    assert inner.calls == 1


async def test_after_the_ttl_the_stale_value_is_served_while_one_refresh_runs() -> None:
    inner, clock = Inner(), Clock()
    cache = make(inner, clock)
    await cache.stats(ONE)
    inner.version = 2
    clock.now += 15

    stale = [await cache.stats(ONE) for _ in range(5)]
    await settle()
    fresh = await cache.stats(ONE)

    assert [impressions(r) for r in stale] == [1] * 5
    info = stale[0].unwrap().cache
    assert info is not None and info.stale_reason == "revalidating" and info.ttl_s == -5
    assert inner.calls == 2  # one refresh for five stale reads
    assert impressions(fresh) == 2


async def test_past_the_stale_while_revalidate_window_callers_wait_for_a_new_value() -> None:
    inner, clock = Inner(), Clock()
    cache = make(inner, clock)
    await cache.stats(ONE)
    inner.version = 2
    clock.now += 10 + 30 + 1

    assert impressions(await cache.stats(ONE)) == 2


async def test_when_the_upstream_fails_a_recent_value_is_served_marked_stale_if_error() -> None:
    inner, clock = Inner(), Clock()
    cache = make(inner, clock)
    await cache.stats(ONE)
    inner.failure = UpstreamUnavailable("500 backendError")
    clock.now += 100

    result = await cache.stats(ONE)

    info = result.unwrap().cache
    assert impressions(result) == 1
    assert info is not None and info.stale_reason == "stale-if-error" and info.age_s == 100


async def test_past_the_stale_if_error_window_the_failure_is_returned() -> None:
    inner, clock = Inner(), Clock()
    cache = make(inner, clock)
    await cache.stats(ONE)
    inner.failure = UpstreamUnavailable("500 backendError")
    clock.now += 10 + 300 + 1

    assert await cache.stats(ONE) == Failure(UpstreamUnavailable("500 backendError"))


async def test_a_failure_without_any_cached_value_is_returned_and_not_cached() -> None:
    inner, clock = Inner(), Clock()
    inner.failure = UpstreamUnavailable("down")
    cache = make(inner, clock)

    assert isinstance(await cache.stats(ONE), Failure)
    inner.failure = None
    assert impressions(await cache.stats(ONE)) == 1
    assert inner.calls == 2


async def test_not_found_is_never_served_stale() -> None:
    inner, clock = Inner(), Clock()
    cache = make(inner, clock)
    await cache.stats(ONE)
    inner.failure = CollectionNotFound(ONE)
    clock.now += 50  # past ttl + swr window: a real miss

    assert await cache.stats(ONE) == Failure(CollectionNotFound(ONE))


async def test_invalidate_forgets_the_value() -> None:
    inner, clock = Inner(), Clock()
    cache = make(inner, clock)
    await cache.stats(ONE)
    inner.version = 2

    await cache.invalidate(ONE)

    assert impressions(await cache.stats(ONE)) == 2
    assert inner.invalidated == [ONE]


async def test_a_computation_that_started_before_a_write_is_never_stored_or_joined_after_it() -> None:
    inner, clock = Inner(), Clock()
    inner.gate = asyncio.Event()
    cache = make(inner, clock)
    before_write = asyncio.create_task(cache.stats(ONE))
    await settle()  # computing with version 1

    inner.version = 2
    await cache.invalidate(ONE)  # the write is acknowledged here
    after_write = asyncio.create_task(cache.stats(ONE))
    await settle()
    inner.gate.set()

    assert impressions(await before_write) == 1  # began before the write: may see the old value
    assert impressions(await after_write) == 2
    assert impressions(await cache.stats(ONE)) == 2  # what is cached is the new value
    assert inner.calls == 2


async def test_at_most_max_entries_are_kept_least_recently_used_first_out() -> None:
    inner, clock = Inner(), Clock()
    cache = make(inner, clock)
    a, b, c, d = (CollectionId(x) for x in "abcd")
    for cid in (a, b, c):
        await cache.stats(cid)
    await cache.stats(a)  # a is now the most recently used

    await cache.stats(d)  # evicts b
    calls = inner.calls
    for cid in (a, c, d):
        await cache.stats(cid)
    assert inner.calls == calls
    await cache.stats(b)
    assert inner.calls == calls + 1


@pytest.mark.parametrize("write", ["save", "replace_if", "delete"])
async def test_every_write_through_the_store_invalidates_the_cache(write: str) -> None:
    inner, clock = Inner(), Clock()
    cache = make(inner, clock)
    store = InvalidatingStore(DictCollectionStore(), cache)
    await store.save(ONE, (VideoId("-4lB5EKS5Uk"),))
    await cache.stats(ONE)
    inner.version = 2

    if write == "save":
        await store.save(ONE, ())
    elif write == "replace_if":
        revision = (await store.get(ONE)).unwrap().revision
        assert isinstance(await store.replace_if(ONE, (), revision), Success)  # passed through
    else:
        await store.delete(ONE)

    assert impressions(await cache.stats(ONE)) == 2


async def test_every_read_is_recorded_as_a_cache_event() -> None:
    inner, clock, metrics = Inner(), Clock(), RecordingMetrics()
    cache = make(inner, clock, metrics)

    await cache.stats(ONE)  # miss
    await cache.stats(ONE)  # hit
    clock.now += 15
    await cache.stats(ONE)  # stale, refreshed in the background
    await settle()
    inner.failure = UpstreamUnavailable("500 backendError")
    clock.now += 100
    await cache.stats(ONE)  # miss, then the stale entry in place of the failure

    assert metrics.cache_events == ["miss", "hit", "stale", "miss", "stale_if_error"]


def test_an_entry_stored_by_a_clock_that_runs_ahead_is_served_as_just_stored() -> None:
    assert POLICY.serve(stored_at=100.0, now=90.0) == CacheInfo(True, 0.0, 10)
    assert POLICY.serve_if_error(stored_at=100.0, now=90.0) == CacheInfo(True, 0.0, 10, "stale-if-error")
