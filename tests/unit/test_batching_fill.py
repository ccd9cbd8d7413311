"""The batch wrapper's fill wait (``INFLUENCER_STATS_BATCH_FILL_MS``): calls filled toward 50 ids
among other requests or while the call gate is busy (issue 33, item 1); the rest: test_batching."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import pytest
from returns.result import Result

from influencer_stats.domain.models import (
    UpstreamError,
    VideoBatch,
)
from influencer_stats.interpreters.videos.batching import BatchingSource
from influencer_stats.interpreters.videos.synthetic import synthetic_stats, synthetic_video_id
from influencer_stats.interpreters.youtube.call_gate import own_flow
from influencer_stats.interpreters.youtube.youtube_api import MAX_IDS_PER_CALL
from tests.support import RecordingMetrics
from tests.unit.test_batching import A, B, C, Inner, Window, settle

WINDOW_S, FILL_S = 0.002, 0.1


class Clock:
    """The batcher's clock: moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def filling(
    inner: Inner,
    window: Window,
    clock: Clock,
    busy: list[bool] | None = None,
    freed: asyncio.Future[None] | None = None,
) -> BatchingSource:
    """A batcher whose calls not full wait up to ``FILL_S`` among other requests (or while ``busy``,
    until ``freed`` is done)."""
    state = busy if busy is not None else [False]

    async def until_freed() -> None:
        assert freed is not None
        await freed

    return BatchingSource(
        inner,
        RecordingMetrics(),
        window_s=WINDOW_S,
        max_ids=MAX_IDS_PER_CALL,
        fill_s=FILL_S,
        busy=lambda: state[0],
        freed=until_freed if freed is not None else None,
        sleep=window,
        clock=clock,
    )


def request(work: Coroutine[Any, Any, Result[VideoBatch, UpstreamError]]) -> asyncio.Task[Any]:
    """``work`` as a request of its own: a flow of the call gate, as the video cache makes it."""
    with own_flow():
        return asyncio.create_task(work)


async def test_a_lone_requests_call_leaves_when_the_window_ends_though_it_may_fill() -> None:
    inner, window, clock = Inner(), Window(), Clock()
    batcher = filling(inner, window, clock)
    ids = [synthetic_video_id(n) for n in range(70)]

    alone = request(batcher.fetch(ids))  # a call of 50 at once, 20 left for the window
    await settle()
    await window.end()

    assert [len(f) for f in inner.fetches] == [50, 20]  # its own 50 do not make it crowded
    assert set((await alone).unwrap().stats) == set(ids)
    assert FILL_S - WINDOW_S not in window.started  # no fill wait (each call's window only)


async def test_among_other_requests_a_call_waits_to_fill_and_leaves_when_the_wait_ends() -> None:
    inner, window, clock = Inner(), Window(), Clock()
    batcher = filling(inner, window, clock)

    first = request(batcher.fetch([A]))
    second = request(batcher.fetch([B]))  # another request's id: the call is crowded
    await settle()
    await window.end()
    assert inner.fetches == []  # the window is over; it waits for more ids
    third = request(batcher.fetch([C]))
    await settle()
    await window.end()  # the fill wait ends

    assert inner.fetches == [(A, B, C)]
    assert window.started == [WINDOW_S, FILL_S - WINDOW_S]  # at most FILL_S after it opened
    for task, video_id in ((first, A), (second, B), (third, C)):
        assert set((await task).unwrap().stats) == {video_id}


async def test_among_other_requests_a_call_at_least_half_full_leaves_when_the_window_ends() -> None:
    inner, window, clock = Inner(), Window(), Clock()
    batcher = filling(inner, window, clock)
    ids = [synthetic_video_id(n) for n in range(MAX_IDS_PER_CALL // 2)]

    first = request(batcher.fetch(ids[:5]))
    second = request(batcher.fetch(ids[5:]))  # crowded, but half full: waiting gains too little
    await settle()
    await window.end()

    assert inner.fetches == [tuple(ids)]
    assert window.started == [WINDOW_S]
    assert set((await first).unwrap().stats) | set((await second).unwrap().stats) == set(ids)


async def test_a_call_filling_up_leaves_as_soon_as_it_is_full() -> None:
    inner, window, clock = Inner(), Window(), Clock()
    batcher = filling(inner, window, clock)
    ids = [synthetic_video_id(n) for n in range(50)]

    request(batcher.fetch(ids[:10]))
    request(batcher.fetch(ids[10:20]))
    await settle()
    await window.end()
    last = request(batcher.fetch(ids[20:]))
    await settle()

    assert inner.fetches == [tuple(ids)]  # without waiting for the fill wait to end
    assert set((await last).unwrap().stats) == set(ids[20:])


async def test_a_request_soon_after_another_ones_ids_waits_to_fill_and_one_long_after_does_not() -> None:
    inner, window, clock = Inner(), Window(), Clock()
    batcher = filling(inner, window, clock)
    await request(_answered(batcher.fetch([A]), window))
    assert window.started == [WINDOW_S]

    clock.now += FILL_S / 2  # another request's ids came a moment ago: more may come
    soon = request(batcher.fetch([B]))
    await settle()
    await window.end()
    assert inner.fetches == [(A,)]
    await window.end()
    await soon

    clock.now += FILL_S * 2  # quiet since: it leaves with the window
    await request(_answered(batcher.fetch([C]), window))

    assert inner.fetches == [(A,), (B,), (C,)]
    assert window.started == [WINDOW_S, WINDOW_S, FILL_S - WINDOW_S, WINDOW_S]


async def test_a_lone_requests_call_waits_to_fill_while_the_call_gate_is_busy() -> None:
    inner, window, clock, busy = Inner(), Window(), Clock(), [True]
    batcher = filling(inner, window, clock, busy)

    alone = request(batcher.fetch([A]))
    await settle()
    await window.end()
    assert inner.fetches == []  # it would wait for a connection anyway
    await window.end()

    assert (await alone).unwrap().stats == {A: synthetic_stats(A)}
    assert window.started == [WINDOW_S, FILL_S - WINDOW_S]


async def test_a_lone_requests_call_held_while_the_gate_is_busy_leaves_when_a_slot_is_given_back() -> None:
    inner, window, clock = Inner(), Window(), Clock()
    freed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    batcher = filling(inner, window, clock, [True], freed)

    alone = request(batcher.fetch([A]))
    await settle()
    await window.end()
    assert inner.fetches == []  # every connection taken: it waits, and may fill meanwhile
    freed.set_result(None)  # a call gave its slot back: the gate serves the fewest-waiting flow next
    await settle()

    assert inner.fetches == [(A,)]  # before the fill wait ended
    assert (await alone).unwrap().stats == {A: synthetic_stats(A)}


async def test_among_other_requests_a_call_held_while_the_gate_is_busy_leaves_when_a_slot_is_given_back() -> (
    None
):
    inner, window, clock = Inner(), Window(), Clock()
    freed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    batcher = filling(inner, window, clock, [True], freed)

    first = request(batcher.fetch([A]))
    second = request(batcher.fetch([B]))  # crowded, but waiting longer would only delay them
    await settle()
    await window.end()
    assert inner.fetches == []
    freed.set_result(None)
    await settle()

    assert inner.fetches == [(A, B)]
    assert (await first).unwrap().stats == {A: synthetic_stats(A)}
    assert (await second).unwrap().stats == {B: synthetic_stats(B)}


def test_the_fill_wait_is_no_shorter_than_the_window() -> None:
    with pytest.raises(ValueError, match="fill_s"):
        BatchingSource(Inner(), RecordingMetrics(), window_s=0.01, max_ids=50, fill_s=0.005)


async def _answered(
    fetch: Coroutine[Any, Any, Result[VideoBatch, UpstreamError]], window: Window
) -> Result[VideoBatch, UpstreamError]:
    """``fetch`` with its window ended as soon as it waits."""
    task = asyncio.create_task(fetch)
    await settle()
    await window.end()
    return await task
