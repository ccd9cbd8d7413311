"""The per-video cache on a fake clock and a scripted inner source: no sleeps."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from returns.result import Failure, Result, Success

from influencer_stats.domain.models import (
    QuotaExhausted,
    UpstreamError,
    UpstreamUnavailable,
    VideoBatch,
    VideoId,
)
from influencer_stats.interpreters.stats.cache import CachePolicy
from influencer_stats.interpreters.video_cache.asked_since import AskedSince
from influencer_stats.interpreters.video_cache.freshness import Freshness
from influencer_stats.interpreters.video_cache.miss_claims import SharedMisses
from influencer_stats.interpreters.video_cache.refresh_ahead import RefreshAhead
from influencer_stats.interpreters.video_cache.stale_queue import MemoryStaleQueue
from influencer_stats.interpreters.video_cache.stale_refresher import StaleRefresher
from influencer_stats.interpreters.video_cache.video_cache import CachedVideoSource
from influencer_stats.interpreters.video_cache.video_calls import VideoCalls
from influencer_stats.interpreters.video_cache.video_entries import MemoryVideoEntries
from influencer_stats.interpreters.videos.synthetic import synthetic_stats
from influencer_stats.testing.clock import ManualClock as Clock
from influencer_stats.testing.event_log import CapturingEventLog
from tests.support import RecordingMetrics

A, B, C, GONE = VideoId("aaaaaaaaaaa"), VideoId("bbbbbbbbbbb"), VideoId("ccccccccccc"), VideoId("XXXXXXXXXXX")
POLICY = CachePolicy(ttl_s=10, stale_while_revalidate_s=30, stale_if_error_s=300, max_entries=100)
DEADLINE_S = 60.0  # a request's wait: far longer than any test holds a call back, unless it says


class Inner:
    """A source that records each fetch, answers synthetic stats (ids starting X are missing),
    fails with ``error`` while it is set, and holds its answers while ``gate`` is closed."""

    def __init__(self) -> None:
        self.fetches: list[tuple[VideoId, ...]] = []
        self.error: UpstreamError | None = None
        self.gate = asyncio.Event()
        self.gate.set()

    async def fetch(self, ids: Sequence[VideoId]) -> Result[VideoBatch, UpstreamError]:
        self.fetches.append(tuple(ids))
        await self.gate.wait()
        if self.error is not None:
            return Failure(self.error)
        found = {i: synthetic_stats(i) for i in ids if not i.startswith("X")}
        return Success(VideoBatch(found, tuple(i for i in ids if i.startswith("X"))))


def assemble(
    inner: Inner,
    entries: MemoryVideoEntries,
    clock: Clock,
    *,
    metrics: RecordingMetrics | None = None,
    stretch: float = 1.0,
    policy: CachePolicy = POLICY,
    deadline_s: float = DEADLINE_S,
    fill_to: int = 0,
    stale: MemoryStaleQueue | None = None,
    since: AskedSince | None = None,
    shared: bool = False,
    misses: SharedMisses | None = None,
    wait: Callable[[float], Awaitable[None]] = asyncio.sleep,
    refused: Callable[[], UpstreamError | None] = lambda: None,
) -> CachedVideoSource:
    """A per-video cache from its parts, the way the composition root puts them together."""
    metrics = metrics or RecordingMetrics()
    freshness = Freshness(policy, lambda: stretch)
    stale = MemoryStaleQueue(fill_to) if stale is None else stale  # (an empty queue is falsy)
    ahead = refresher = None
    if fill_to:
        since = AskedSince(policy.max_entries) if since is None else since
        ahead = RefreshAhead(since, stale, entries, clock, freshness, metrics, fill_to=fill_to, shared=shared)
    calls = VideoCalls(inner, entries, clock, freshness, metrics, ahead=ahead, misses=misses)
    if ahead is not None:
        refresher = StaleRefresher(stale, calls, ahead, clock, freshness, wait_s=1.0, sleep=wait)
    return CachedVideoSource(
        entries,
        calls,
        freshness,
        clock,
        CapturingEventLog(),
        metrics,
        deadline_s=deadline_s,
        ahead=ahead,
        refresher=refresher,
        refused=refused,
    )


def make(
    inner: Inner,
    clock: Clock,
    metrics: RecordingMetrics | None = None,
    stretch: float = 1.0,
    size: int = 100,
    fill_to: int = 0,
) -> CachedVideoSource:
    return assemble(inner, MemoryVideoEntries(size), clock, metrics=metrics, stretch=stretch, fill_to=fill_to)


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_second_fetch_within_the_ttl_asks_nothing_and_says_how_old_it_is() -> None:
    inner, clock, metrics = Inner(), Clock(), RecordingMetrics()
    cache = make(inner, clock, metrics)

    first = await cache.fetch([A, B])
    clock.now += 4
    second = await cache.fetch([A, B])

    assert inner.fetches == [(A, B)]
    assert first.unwrap().cache is None  # fetched just now
    assert second.unwrap().stats == first.unwrap().stats
    info = second.unwrap().cache
    assert info is not None
    assert (info.hit, info.age_s, info.ttl_s, info.stale_reason) == (True, 4, 6, None)
    assert metrics.video_cache == {"miss": 2, "hit": 2}
    assert metrics.saved == {"video_cache": 1}


async def test_only_the_lacking_ids_are_asked_for_in_one_call_and_the_answer_keeps_request_order() -> None:
    inner, clock = Inner(), Clock()
    cache = make(inner, clock)
    await cache.fetch([B])
    clock.now += 2

    batch = (await cache.fetch([A, B, C, GONE])).unwrap()

    assert inner.fetches == [(B,), (A, C, GONE)]
    assert list(batch.stats) == [A, B, C]
    assert batch.missing == (GONE,)
    assert batch.cache is not None and batch.cache.age_s == 2  # the oldest video in the answer


async def test_a_missing_video_stays_missing_for_the_ttl_without_asking_again() -> None:
    inner, clock = Inner(), Clock()
    cache = make(inner, clock)

    await cache.fetch([GONE])
    clock.now += 9
    again = await cache.fetch([GONE])

    assert inner.fetches == [(GONE,)]
    assert again.unwrap().missing == (GONE,)


async def test_past_the_ttl_it_is_served_stale_while_one_refresh_runs() -> None:
    inner, clock, metrics = Inner(), Clock(), RecordingMetrics()
    cache = make(inner, clock, metrics)
    await cache.fetch([A])
    clock.now += 15

    stale = await cache.fetch([A])
    also_stale = await cache.fetch([A])  # the refresh is still in flight: no second one
    await settle()
    clock.now += 1
    fresh = await cache.fetch([A])

    assert inner.fetches == [(A,), (A,)]
    info = stale.unwrap().cache
    assert info is not None and (info.age_s, info.stale_reason) == (15, "revalidating")
    assert also_stale.unwrap().cache is not None
    info = fresh.unwrap().cache
    assert info is not None and (info.age_s, info.stale_reason) == (1, None)
    assert metrics.video_cache["stale"] == 2


async def test_past_the_stale_window_a_fetch_waits_for_fresh_counters() -> None:
    inner, clock = Inner(), Clock()
    cache = make(inner, clock)
    await cache.fetch([A])
    clock.now += 41  # ttl 10 + stale-while-revalidate 30, and then some

    answer = await cache.fetch([A])

    assert inner.fetches == [(A,), (A,)]
    assert answer.unwrap().cache is None


async def test_the_governors_stretch_keeps_entries_fresh_longer() -> None:
    inner, clock = Inner(), Clock()
    cache = make(inner, clock, stretch=3.0)
    await cache.fetch([A])
    clock.now += 25  # 2.5 TTLs: fresh for 3

    answer = await cache.fetch([A])

    assert inner.fetches == [(A,)]
    info = answer.unwrap().cache
    assert info is not None and info.stale_reason is None and info.ttl_s == 5


async def test_concurrent_fetches_of_one_video_share_one_call() -> None:
    inner, clock = Inner(), Clock()
    cache = make(inner, clock)
    inner.gate.clear()

    first = asyncio.create_task(cache.fetch([A, B]))
    await settle()
    second = asyncio.create_task(cache.fetch([B, C]))
    await settle()
    inner.gate.set()
    one, two = await first, await second

    assert inner.fetches == [(A, B), (C,)]  # B once, in the first call
    assert set(one.unwrap().stats) == {A, B}
    assert set(two.unwrap().stats) == {B, C}


async def test_a_caller_that_goes_away_does_not_cancel_the_call_for_the_others() -> None:
    inner, clock = Inner(), Clock()
    cache = make(inner, clock)
    inner.gate.clear()
    leaving = asyncio.create_task(cache.fetch([A]))
    await settle()
    staying = asyncio.create_task(cache.fetch([A]))
    await settle()

    leaving.cancel()
    await settle()
    inner.gate.set()

    assert (await staying).unwrap().stats == {A: synthetic_stats(A)}
    assert inner.fetches == [(A,)]


async def test_failures_are_never_cached() -> None:
    inner, clock = Inner(), Clock()
    cache = make(inner, clock)
    inner.error = UpstreamUnavailable("503")

    failed = await cache.fetch([A])
    inner.error = None
    answered = await cache.fetch([A])

    assert failed == Failure(UpstreamUnavailable("503"))
    assert answered.unwrap().stats == {A: synthetic_stats(A)}
    assert len(inner.fetches) == 2


async def test_when_youtube_fails_recent_entries_are_served_stale_if_error_and_old_ones_are_not() -> None:
    inner, clock, metrics = Inner(), Clock(), RecordingMetrics()
    cache = make(inner, clock, metrics)
    await cache.fetch([A])
    inner.error = UpstreamUnavailable("503")

    clock.now += 100  # past ttl + stale-while-revalidate, within stale-if-error
    served = await cache.fetch([A])
    clock.now += 300  # past ttl + stale-if-error
    failed = await cache.fetch([A])
    lacking = await cache.fetch([B])

    info = served.unwrap().cache
    assert info is not None and (info.age_s, info.stale_reason) == (100, "stale-if-error")
    assert failed == Failure(UpstreamUnavailable("503"))
    assert lacking == Failure(UpstreamUnavailable("503"))
    assert metrics.video_cache["stale_if_error"] == 1


async def test_a_spent_budget_serves_every_entry_held_however_old_and_fails_only_the_never_fetched() -> None:
    inner, clock, metrics = Inner(), Clock(), RecordingMetrics()
    cache = make(inner, clock, metrics)
    await cache.fetch([A, GONE])
    spent = QuotaExhausted("budget spent", retry_after_s=3600)
    inner.error = spent

    clock.now += 10_000  # far past every window
    served = await cache.fetch([A, GONE])
    never_fetched = await cache.fetch([A, B])

    batch = served.unwrap()
    assert batch.stats == {A: synthetic_stats(A)} and batch.missing == (GONE,)
    assert batch.cache is not None
    assert (batch.cache.age_s, batch.cache.stale_reason) == (10_000, "quota-exhausted")
    assert never_fetched == Failure(spent)
    assert metrics.quota_stale_answers == 1


async def test_entries_are_bounded_least_recently_used_first() -> None:
    inner, clock = Inner(), Clock()
    cache = make(inner, clock, size=2)

    await cache.fetch([A])
    await cache.fetch([B])
    await cache.fetch([A])  # A used again: B is now the least recently used
    await cache.fetch([C])  # evicts B
    await cache.fetch([A, B])

    assert inner.fetches == [(A,), (B,), (C,), (B,)]


async def test_an_empty_fetch_asks_nothing() -> None:
    inner, clock = Inner(), Clock()

    assert await make(inner, clock).fetch([]) == Success(VideoBatch({}, ()))
    assert inner.fetches == []


async def test_a_call_with_room_refreshes_ahead_the_oldest_videos_asked_for_since_past_a_quarter_ttl() -> (
    None
):
    inner, clock, metrics = Inner(), Clock(), RecordingMetrics()
    cache = make(inner, clock, metrics, fill_to=4)
    await cache.fetch([A])
    clock.now += 1
    await cache.fetch([B])
    clock.now += 4
    await cache.fetch([C])  # A, B, C fetched at 0, 1, 5 (each fetch had room, but nothing was due soon)
    clock.now += 1  # now 6: A (age 6) and B (age 5) are past a quarter of their 10 s; C (age 1) is not
    await cache.fetch([A, C])  # asked for since: A and C; B was not

    gone = VideoId("XXXXXXXXXX1")
    await cache.fetch([gone])  # a miss with room for 3 more: A only (B not asked, C too young)

    assert inner.fetches == [(A,), (B,), (C,), (gone, A)]
    assert metrics.video_cache["refreshed_ahead"] == 1
    clock.now += 4.5  # A was refreshed at 6: fresh until 16; B expired at 11
    assert (await cache.fetch([A])).unwrap().cache is not None
    assert len(inner.fetches) == 4


async def test_refresh_ahead_never_asks_for_an_id_twice_in_one_call_nor_one_in_flight() -> None:
    inner, clock = Inner(), Clock()
    cache = make(inner, clock, fill_to=50)
    await cache.fetch([A, B])
    clock.now += 8
    await cache.fetch([A, B])  # asked for since, and past half
    inner.gate.clear()
    first = asyncio.create_task(cache.fetch([C]))  # takes A and B along
    await settle()
    second = asyncio.create_task(cache.fetch([VideoId("ddddddddddd")]))  # A, B in flight: not again
    await settle()
    inner.gate.set()
    await first, await second

    assert inner.fetches == [(A, B), (C, A, B), (VideoId("ddddddddddd"),)]


class Wait:
    """The cache's ``sleep`` for stale refreshes: returns only when the test ends the wait."""

    def __init__(self) -> None:
        self.waits: list[float] = []
        self._end = asyncio.Event()

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await self._end.wait()

    async def end(self) -> None:
        self._end.set()
        await settle()


def with_wait(inner: Inner, clock: Clock, wait: Wait, fill_to: int) -> CachedVideoSource:
    return assemble(inner, MemoryVideoEntries(100), clock, fill_to=fill_to, wait=wait)


async def test_with_refresh_ahead_stale_videos_ride_the_next_call_instead_of_one_of_their_own() -> None:
    inner, clock, wait = Inner(), Clock(), Wait()
    cache = with_wait(inner, clock, wait, fill_to=50)
    await cache.fetch([A, B])
    clock.now += 15  # stale

    stale = await cache.fetch([A, B])
    await settle()
    assert len(inner.fetches) == 1 and wait.waits == [1.0]  # no call yet: they wait for company
    await cache.fetch([C])  # a miss: A and B ride along

    assert inner.fetches[1] == (C, A, B)
    info = stale.unwrap().cache
    assert info is not None and info.stale_reason == "revalidating"
    await wait.end()
    assert len(inner.fetches) == 2  # nothing left to refresh when the wait ends


async def test_stale_videos_nobody_else_calls_for_leave_when_the_wait_ends() -> None:
    inner, clock, wait = Inner(), Clock(), Wait()
    cache = with_wait(inner, clock, wait, fill_to=50)
    await cache.fetch([A])
    clock.now += 15

    await cache.fetch([A])
    await wait.end()

    assert inner.fetches == [(A,), (A,)]
