"""Miss claims and shared misses, and two caches sharing them (two workers on one Redis, modelled in memory).

Fake clock, scripted inner sources, a test-controlled poll: no sleeps.
"""

from __future__ import annotations

import asyncio
from asyncio import Task
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from returns.result import Result, Success

from influencer_stats.domain.models import UpstreamError, UpstreamUnavailable, VideoBatch, VideoEntry, VideoId
from influencer_stats.interpreters.video_cache.miss_claims import MemoryMissClaims, SharedMisses
from influencer_stats.interpreters.video_cache.stale_queue import MemoryStaleQueue
from influencer_stats.interpreters.video_cache.video_entries import MemoryVideoEntries
from influencer_stats.interpreters.videos.synthetic import synthetic_stats
from influencer_stats.testing.clock import ManualClock as Clock
from tests.unit.test_stale_queue import worker
from tests.unit.test_video_cache import A, B, C, Inner, Wait, settle

FetchResult = Result[VideoBatch, UpstreamError]

FRESH = 10.0


class Polls:
    """The shared misses' ``sleep``: each poll waits until the test lets one through."""

    def __init__(self) -> None:
        self._go = asyncio.Semaphore(0)

    async def __call__(self, seconds: float) -> None:
        await self._go.acquire()

    async def run(self, n: int = 1) -> None:
        for _ in range(n):
            self._go.release()
            await settle()


class Timers:
    """The shared misses' ``later``: timers that fire only when the test says."""

    def __init__(self) -> None:
        self.pending: list[tuple[float, Callable[[], None], list[bool]]] = []

    def __call__(self, seconds: float, callback: Callable[[], None]) -> Callable[[], None]:
        cancelled = [False]
        self.pending.append((seconds, callback, cancelled))
        return lambda: cancelled.__setitem__(0, True)

    async def fire(self) -> None:
        """Every timer not called off ends now."""
        pending, self.pending = self.pending, []
        for _, callback, cancelled in pending:
            if not cancelled[0]:
                callback()
        await settle()


class CountingClaims(MemoryMissClaims):
    """Claims that record each ``settled`` read."""

    def __init__(self, clock: Clock, entries: MemoryVideoEntries) -> None:
        super().__init__(clock, 2.0, entries)
        self.reads: list[tuple[VideoId, ...]] = []

    async def settled(self, ids: Sequence[VideoId]) -> Mapping[VideoId, VideoEntry | None]:
        self.reads.append(tuple(ids))
        return await super().settled(ids)


async def test_a_video_claimed_by_one_worker_is_reported_to_the_other_until_released_or_lapsed() -> None:
    clock, entries = Clock(), MemoryVideoEntries(100)
    one = MemoryMissClaims(clock, 2.0, entries)
    other = MemoryMissClaims(clock, 2.0, entries, one.held)

    assert await one.claim([A, B], clock.now, FRESH) == []
    assert await other.claim([B, C], clock.now, FRESH) == [B]  # C is the other's now
    assert await one.claim([C], clock.now, FRESH) == [C]
    await other.release([A, B])  # not its claims: nothing changes
    assert await other.claim([A], clock.now, FRESH) == [A]

    await one.release([A])
    assert await other.claim([A], clock.now, FRESH) == []
    clock.now += 2.0  # one's claim on B lapses: a worker that died holds nothing for long
    assert await other.claim([B], clock.now, FRESH) == []


async def test_a_video_another_worker_stored_fresh_since_it_was_read_is_not_claimed_again() -> None:
    clock, entries = Clock(), MemoryVideoEntries(100)
    claims = MemoryMissClaims(clock, 2.0, entries)
    await entries.put_many(
        {A: VideoEntry(synthetic_stats(A), clock.now - 1), B: VideoEntry(None, clock.now - 30)}
    )

    assert await claims.claim([A, B], clock.now, FRESH) == [A]  # B is due: this worker claims it
    assert claims.held.keys() == {B}


async def test_shared_misses_hand_each_waiter_its_entries_once_settled_with_one_read_per_poll() -> None:
    clock, polls, entries = Clock(), Polls(), MemoryVideoEntries(100)
    claims = CountingClaims(clock, entries)
    other = MemoryMissClaims(clock, 2.0, entries, claims.held)
    await other.claim([A, B, C], clock.now, FRESH)  # another worker is calling for them
    misses = SharedMisses(claims, clock, poll_s=0.005, wait_s=1.0, max_ids=100, sleep=polls)
    first = asyncio.create_task(misses.wait([A, B], FRESH))
    second = asyncio.create_task(misses.wait([B, C], FRESH))
    await settle()

    await entries.put_many({A: VideoEntry(synthetic_stats(A), clock.now), B: VideoEntry(None, clock.now)})
    await other.release([A, B])
    await polls.run()
    assert first.done() and not second.done()
    assert await first == {A: VideoEntry(synthetic_stats(A), clock.now), B: VideoEntry(None, clock.now)}
    await entries.put_many({C: VideoEntry(synthetic_stats(C), clock.now)})
    await other.release([C])
    await polls.run()

    assert await second == {B: VideoEntry(None, clock.now), C: VideoEntry(synthetic_stats(C), clock.now)}
    assert claims.reads == [(A, B, C), (C,)]  # one read for both waiters, then only what is unsettled


async def test_a_waiter_gets_only_fresh_entries_and_stops_waiting_once_its_videos_are_settled() -> None:
    clock, polls, entries = Clock(), Polls(), MemoryVideoEntries(100)
    claims = CountingClaims(clock, entries)
    other = MemoryMissClaims(clock, 2.0, entries, claims.held)
    await other.claim([A, B], clock.now, FRESH)
    await entries.put_many({B: VideoEntry(synthetic_stats(B), clock.now - 30)})  # old: not what is awaited
    misses = SharedMisses(claims, clock, poll_s=0.005, wait_s=1.0, max_ids=100, sleep=polls)
    waiting = asyncio.create_task(misses.wait([A, B], FRESH))
    await polls.run()
    assert not waiting.done()

    await other.release([A, B])  # its call failed: nothing new stored
    await polls.run()

    assert await waiting == {}  # the caller calls for both itself, without waiting out its polls
    assert len(claims.reads) == 2


async def test_a_waiter_whose_videos_stay_claimed_gets_what_settled_when_its_wait_ends() -> None:
    clock, polls, timers, entries = Clock(), Polls(), Timers(), MemoryVideoEntries(100)
    claims = CountingClaims(clock, entries)
    other = MemoryMissClaims(clock, 2.0, entries, claims.held)
    await other.claim([A, B], clock.now, FRESH)
    misses = SharedMisses(claims, clock, poll_s=0.005, wait_s=1.0, max_ids=100, sleep=polls, later=timers)
    waiting = asyncio.create_task(misses.wait([A, B], FRESH))
    await polls.run()
    await entries.put_many({A: VideoEntry(synthetic_stats(A), clock.now)})
    await other.release([A])
    await polls.run()
    assert not waiting.done()
    assert [seconds for seconds, _, _ in timers.pending] == [1.0]

    await timers.fire()

    assert await waiting == {A: VideoEntry(synthetic_stats(A), clock.now)}
    assert len(claims.reads) == 2


async def test_a_read_that_hangs_does_not_hold_a_waiter_past_its_wait() -> None:
    clock, timers, entries = Clock(), Timers(), MemoryVideoEntries(100)
    stalled = asyncio.Event()

    class StalledClaims(MemoryMissClaims):  # Redis stopped answering (SIGSTOP): a read never returns
        async def settled(self, ids: Sequence[VideoId]) -> Mapping[VideoId, VideoEntry | None]:
            stalled.set()
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

    claims = StalledClaims(clock, 2.0, entries)
    await MemoryMissClaims(clock, 2.0, entries, claims.held).claim([A], clock.now, FRESH)
    misses = SharedMisses(claims, clock, poll_s=0.0, wait_s=1.0, max_ids=100, later=timers)
    waiting = asyncio.create_task(misses.wait([A], FRESH))
    await stalled.wait()
    await settle()
    assert not waiting.done()

    await timers.fire()

    assert await waiting == {}  # its caller calls for A itself


@dataclass
class TwoWorkers:
    """Two workers' caches sharing entries, a stale queue and claims; the first's call held."""

    one: Inner = field(default_factory=Inner)
    other: Inner = field(default_factory=Inner)
    polls: Polls = field(default_factory=Polls)
    timers: Timers = field(default_factory=Timers)
    held: dict[VideoId, tuple[object, float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        clock, entries, queue = Clock(), MemoryVideoEntries(100), MemoryStaleQueue(50)
        self.first, self.second = (
            worker(
                inner,
                entries,
                queue,
                clock,
                Wait(),
                SharedMisses(
                    claims,
                    clock,
                    poll_s=0.005,
                    wait_s=1.0,
                    max_ids=1_000,
                    sleep=self.polls,
                    later=self.timers,
                ),
            )
            for inner, claims in (
                (self.one, MemoryMissClaims(clock, 2.0, entries, self.held)),
                (self.other, MemoryMissClaims(clock, 2.0, entries, self.held)),
            )
        )
        self.one.gate.clear()  # the first worker's call is in flight

    async def both_miss(self) -> tuple[Task[FetchResult], Task[FetchResult]]:
        """The first misses A and B, then the second B and C; the first's call answers."""
        first_fetch = asyncio.create_task(self.first.fetch([A, B]))
        await settle()
        second_fetch = asyncio.create_task(self.second.fetch([B, C]))
        await settle()
        self.one.gate.set()
        await settle()
        await self.polls.run()
        await settle()
        return first_fetch, second_fetch


async def test_a_video_two_workers_miss_at_once_is_called_for_by_the_first_and_waited_for_by_the_other() -> (
    None
):
    workers = TwoWorkers()

    first_fetch, second_fetch = await workers.both_miss()

    assert second_fetch.done()  # one poll after the first released B
    assert workers.one.fetches == [(A, B)]
    assert workers.other.fetches == [(C,)]  # B was the first's to call for
    answer = (await second_fetch).unwrap()
    assert answer.stats == {B: synthetic_stats(B), C: synthetic_stats(C)}
    assert (await first_fetch).unwrap().stats == {A: synthetic_stats(A), B: synthetic_stats(B)}
    assert workers.held == {}  # each released its claims once its entries were stored


async def test_when_the_claimers_call_fails_the_waiter_calls_for_the_video_itself() -> None:
    workers = TwoWorkers()
    workers.one.error = UpstreamUnavailable("down")

    first_fetch, second_fetch = await workers.both_miss()  # the first released B without storing it

    assert second_fetch.done()
    assert workers.other.fetches == [(C,), (B,)]
    assert (await second_fetch).unwrap().stats == {B: synthetic_stats(B), C: synthetic_stats(C)}
    assert not isinstance(await first_fetch, Success)
