"""What a request that stops waiting leaves behind in the per-video cache: paid calls kept, no state.

A scripted inner source whose calls answer when the test opens its gate: no sleeps. A
deadline of 0 s ends a request's wait at once, while its calls are still out.
"""

from __future__ import annotations

import math

from returns.result import Failure, Success

from influencer_stats.domain.models import QuotaExhausted, UpstreamTimeout, VideoEntry, VideoId
from influencer_stats.interpreters.stats.cache import CachePolicy
from influencer_stats.interpreters.video_cache.asked_since import AskedSince
from influencer_stats.interpreters.video_cache.video_cache import CachedVideoSource
from influencer_stats.interpreters.video_cache.video_entries import MemoryVideoEntries
from influencer_stats.interpreters.videos.synthetic import synthetic_stats, synthetic_video_id
from influencer_stats.testing.clock import ManualClock as Clock
from tests.unit.test_video_cache import Inner, assemble, settle

ROOMY = CachePolicy(ttl_s=10, stale_while_revalidate_s=30, stale_if_error_s=300, max_entries=10_000)


def make(
    inner: Inner,
    clock: Clock,
    *,
    deadline_s: float,
    policy: CachePolicy = ROOMY,
    since: AskedSince | None = None,
) -> CachedVideoSource:
    entries = MemoryVideoEntries(policy.max_entries)
    return assemble(inner, entries, clock, policy=policy, deadline_s=deadline_s, fill_to=50, since=since)


def videos(first: int, count: int) -> list[VideoId]:
    return [synthetic_video_id(first + n) for n in range(count)]


async def test_a_request_past_its_deadline_times_out_and_the_calls_it_started_fill_the_cache() -> None:
    inner, clock = Inner(), Clock()
    inner.gate.clear()  # YouTube is slow
    cache = make(inner, clock, deadline_s=0.0)
    big = videos(0, 120)

    first = await cache.fetch(big)

    assert isinstance(first, Failure) and isinstance(first.failure(), UpstreamTimeout)
    assert [len(f) for f in inner.fetches] == [50, 50, 20]  # a call's worth at a time
    inner.gate.set()  # the calls answer after the request has gone
    await settle()
    again = await cache.fetch(big)

    assert isinstance(again, Success) and set(again.unwrap().stats) == set(big)
    assert len(inner.fetches) == 3  # nothing paid twice


async def test_asking_again_while_the_calls_are_out_waits_for_them_instead_of_paying_again() -> None:
    inner, clock = Inner(), Clock()
    inner.gate.clear()
    cache = make(inner, clock, deadline_s=0.0)
    big = videos(0, 100)

    first = await cache.fetch(big)  # 504: the deadline passed, the calls are out
    second = await cache.fetch(big)  # asked again before they answer: 504 again, nothing new asked
    inner.gate.set()
    await settle()
    third = await cache.fetch(big)

    assert isinstance(first, Failure) and isinstance(second, Failure)
    assert set(third.unwrap().stats) == set(big)
    assert [len(f) for f in inner.fetches] == [50, 50]  # the first request's two calls, once


async def test_what_landed_before_the_deadline_is_served_the_next_time_even_if_the_rest_failed() -> None:
    inner, clock = Inner(), Clock()
    cache = make(inner, clock, deadline_s=60.0)
    first_half, second_half = videos(0, 50), videos(50, 50)
    await cache.fetch(first_half)  # one call lands
    inner.error = QuotaExhausted("spent", retry_after_s=60)

    failed = await cache.fetch([*first_half, *second_half])
    served = await cache.fetch(first_half)

    assert isinstance(failed, Failure)
    assert served.unwrap().stats == {i: synthetic_stats(i) for i in first_half}


async def test_ids_asked_for_while_every_call_fails_leave_no_trace_behind() -> None:
    inner, clock = Inner(), Clock()
    inner.error = QuotaExhausted("spent", retry_after_s=60)
    policy = CachePolicy(ttl_s=10, stale_while_revalidate_s=30, stale_if_error_s=300, max_entries=100)
    since = AskedSince(policy.max_entries)
    cache = make(inner, clock, deadline_s=60.0, policy=policy, since=since)

    for round_ in range(20):  # 20 x 5,000 new ids, each fetch failing (the budget is spent)
        assert isinstance(await cache.fetch(videos(round_ * 5_000, 5_000)), Failure)
    await settle()

    assert len(since) == 0  # nothing noted for refresh-ahead
    assert len(cache._calls.in_flight) == 0


def test_the_videos_remembered_for_refresh_ahead_are_bounded_by_the_entries_kept() -> None:
    since = AskedSince(max_entries=100)

    for round_ in range(10):  # each round: 100 new videos fetched, then asked for again
        batch = videos(round_ * 100, 100)
        since.fetched(batch, at=float(round_))
        since.asked({i: VideoEntry(synthetic_stats(i), float(round_)) for i in batch})
        since.learned(
            {i: VideoEntry(synthetic_stats(i), round_ + 0.5) for i in videos(50_000 + round_ * 100, 100)}
        )

    assert len(since) <= 100
    assert since.fetched_at(videos(0, 1)[0]) == -math.inf  # the oldest are forgotten
    assert since.fetched_at(videos(50_900, 1)[0]) == 9.5
