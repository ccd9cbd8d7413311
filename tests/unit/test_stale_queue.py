"""The stale queue, and two caches sharing one (two workers on one Redis, modelled in memory).

Fake clock, scripted inner sources, a test-controlled wait: no sleeps.
"""

from __future__ import annotations

from influencer_stats.domain.models import VideoId
from influencer_stats.interpreters.video_cache.miss_claims import SharedMisses
from influencer_stats.interpreters.video_cache.stale_queue import MemoryStaleQueue
from influencer_stats.interpreters.video_cache.video_cache import CachedVideoSource
from influencer_stats.interpreters.video_cache.video_entries import MemoryVideoEntries
from influencer_stats.testing.clock import ManualClock as Clock
from tests.unit.test_video_cache import A, B, C, Inner, Wait, assemble, settle

D = VideoId("ddddddddddd")


async def test_a_push_takes_a_calls_worth_out_once_that_many_wait_and_never_holds_more() -> None:
    queue = MemoryStaleQueue(room=3)

    assert await queue.push([A, B], now=1.0, fresh_s=10) == []
    assert await queue.push([B], now=2.0, fresh_s=10) == []  # queued already: keeps its place
    assert await queue.push([C, D], now=3.0, fresh_s=10) == [A, B, C]
    assert len(queue) == 1


async def test_take_gives_the_oldest_first_up_to_the_room_asked() -> None:
    queue = MemoryStaleQueue(room=50)
    await queue.push([A, B, C], now=1.0, fresh_s=10)

    assert await queue.take(2, now=2.0, fresh_s=10) == [A, B]
    assert await queue.take(2, now=2.0, fresh_s=10) == [C]
    assert await queue.take(2, now=2.0, fresh_s=10) == []


async def test_take_due_waits_for_the_oldest_to_be_queued_at_or_before_the_cutoff() -> None:
    queue = MemoryStaleQueue(room=50)
    assert await queue.take_due(cutoff=5.0, now=6.0, fresh_s=10) == ([], False)
    await queue.push([A], now=5.5, fresh_s=10)

    assert await queue.take_due(cutoff=5.0, now=6.0, fresh_s=10) == ([], True)  # queued after it
    await queue.push([B], now=6.5, fresh_s=10)
    assert await queue.take_due(cutoff=5.5, now=7.0, fresh_s=10) == ([A, B], False)  # all of them


def worker(
    inner: Inner,
    entries: MemoryVideoEntries,
    queue: MemoryStaleQueue,
    clock: Clock,
    wait: Wait,
    misses: SharedMisses | None = None,
) -> CachedVideoSource:
    return assemble(inner, entries, clock, fill_to=50, stale=queue, shared=True, misses=misses, wait=wait)


async def test_a_video_stale_on_two_workers_sharing_a_queue_is_refreshed_by_one_call() -> None:
    clock, entries, queue = Clock(), MemoryVideoEntries(100), MemoryStaleQueue(50)
    one, other = Inner(), Inner()
    wait_one, wait_other = Wait(), Wait()
    first = worker(one, entries, queue, clock, wait_one)
    second = worker(other, entries, queue, clock, wait_other)
    await first.fetch([A, B])
    clock.now += 15  # stale for both: the entries are shared

    await first.fetch([A, B])
    await second.fetch([A, B])
    await settle()
    await wait_one.end()  # the first wait to end takes both
    await wait_other.end()  # nothing left for the other

    assert one.fetches == [(A, B), (A, B)]
    assert other.fetches == []


async def test_a_workers_miss_call_carries_the_videos_another_worker_found_stale() -> None:
    clock, entries, queue = Clock(), MemoryVideoEntries(100), MemoryStaleQueue(50)
    one, other = Inner(), Inner()
    first = worker(one, entries, queue, clock, Wait())
    second = worker(other, entries, queue, clock, Wait())
    await first.fetch([A, B])
    clock.now += 15

    await first.fetch([A, B])  # stale: queued, not called for
    await settle()
    await second.fetch([C])  # a miss on the other worker: A and B ride along

    assert one.fetches == [(A, B)]
    assert other.fetches == [(C, A, B)]


async def test_a_call_is_filled_to_a_whole_number_of_calls_of_the_client() -> None:
    clock, inner = Clock(), Inner()
    cache = worker(inner, MemoryVideoEntries(1_000), MemoryStaleQueue(50), clock, Wait())
    old = [VideoId(f"old{n:08d}") for n in range(60)]
    await cache.fetch(old)
    clock.now += 5  # past a quarter of the ttl: due soon
    await cache.fetch(old)
    new = [VideoId(f"new{n:08d}") for n in range(60)]

    await cache.fetch(new)  # 60 ids are two calls of the client: the second has room for 40

    assert [len(f) for f in inner.fetches[-2:]] == [50, 50]  # asked a call's worth at a time
    assert (*inner.fetches[-2], *inner.fetches[-1][:10]) == tuple(new)
    assert set(inner.fetches[-1][10:]) <= set(old)


async def test_refresh_ahead_skips_what_another_worker_refreshed_since_this_one_read_it() -> None:
    clock, entries, queue = Clock(), MemoryVideoEntries(100), MemoryStaleQueue(50)
    one, other = Inner(), Inner()
    first = worker(one, entries, queue, clock, Wait())
    second = worker(other, entries, queue, clock, Wait())
    await first.fetch([A, B])
    await second.fetch([A, B])  # read: both know A and B were stored at 0
    clock.now += 5
    await first.fetch([A, B])  # asked again, past a quarter: due soon on both
    await second.fetch([A, B])
    await first.fetch([C])  # takes A and B ahead
    assert one.fetches[-1] == (C, A, B)

    await second.fetch([D])  # the second worker has not read A or B since; it asks Redis first

    assert other.fetches == [(D,)]
