"""Cross-request batching with a window the test ends by hand: no sleeps."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine, Sequence
from typing import Any

from returns.result import Failure, Result, Success

from influencer_stats.algebras.clients import CALLER, Caller
from influencer_stats.domain.models import (
    ShareSpent,
    UpstreamError,
    UpstreamUnavailable,
    VideoBatch,
    VideoId,
)
from influencer_stats.interpreters.videos.batching import BatchingSource
from influencer_stats.interpreters.videos.synthetic import synthetic_stats, synthetic_video_id
from influencer_stats.interpreters.youtube.youtube_api import MAX_IDS_PER_CALL
from tests.support import RecordingMetrics

A, B, C, GONE = VideoId("aaaaaaaaaaa"), VideoId("bbbbbbbbbbb"), VideoId("ccccccccccc"), VideoId("XXXXXXXXXXX")


class Inner:
    """Records each fetch; fails those holding a ``poisoned`` id; holds answers while ``gate`` is closed."""

    def __init__(self) -> None:
        self.fetches: list[tuple[VideoId, ...]] = []
        self.poisoned: set[VideoId] = set()
        self.gate = asyncio.Event()
        self.gate.set()

    async def fetch(self, ids: Sequence[VideoId]) -> Result[VideoBatch, UpstreamError]:
        self.fetches.append(tuple(ids))
        await self.gate.wait()
        if self.poisoned & set(ids):
            return Failure(UpstreamUnavailable("503"))
        found = {i: synthetic_stats(i) for i in ids if not i.startswith("X")}
        return Success(VideoBatch(found, tuple(i for i in ids if i.startswith("X"))))


class Window:
    """The batcher's ``sleep``: returns only when the test ends the window."""

    def __init__(self) -> None:
        self.started: list[float] = []
        self._end = asyncio.Event()

    async def __call__(self, seconds: float) -> None:
        self.started.append(seconds)
        await self._end.wait()
        self._end.clear()

    async def end(self) -> None:
        self._end.set()
        await settle()


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


def make(inner: Inner, window: Window, metrics: RecordingMetrics | None = None) -> BatchingSource:
    return BatchingSource(
        inner, metrics or RecordingMetrics(), window_s=0.002, max_ids=MAX_IDS_PER_CALL, sleep=window
    )


async def test_fetches_within_one_window_share_one_call_and_each_gets_exactly_its_ids() -> None:
    inner, window, metrics = Inner(), Window(), RecordingMetrics()
    batcher = make(inner, window, metrics)

    first = asyncio.create_task(batcher.fetch([A, B]))
    second = asyncio.create_task(batcher.fetch([B, C, GONE]))
    await settle()
    assert inner.fetches == []  # waiting for the window
    await window.end()

    assert inner.fetches == [(A, B, C, GONE)]  # B once
    assert await first == Success(VideoBatch({A: synthetic_stats(A), B: synthetic_stats(B)}, ()))
    assert await second == Success(VideoBatch({B: synthetic_stats(B), C: synthetic_stats(C)}, (GONE,)))
    assert window.started == [0.002]
    assert metrics.saved == {"batching": 1}


async def test_fifty_waiting_ids_leave_at_once_without_waiting_for_the_window() -> None:
    inner, window = Inner(), Window()
    batcher = make(inner, window)
    ids = [synthetic_video_id(n) for n in range(50)]

    first = asyncio.create_task(batcher.fetch(ids[:30]))
    await settle()
    second = asyncio.create_task(batcher.fetch(ids[30:]))
    await settle()

    assert inner.fetches == [tuple(ids)]
    assert set((await first).unwrap().stats) == set(ids[:30])
    assert set((await second).unwrap().stats) == set(ids[30:])


async def test_a_large_fetch_sends_its_full_calls_at_once_and_the_rest_after_the_window() -> None:
    inner, window = Inner(), Window()
    batcher = make(inner, window)
    ids = [synthetic_video_id(n) for n in range(120)]

    fetch = asyncio.create_task(batcher.fetch(ids))
    await settle()
    assert [len(f) for f in inner.fetches] == [50, 50]
    late = asyncio.create_task(batcher.fetch([A]))  # joins the 20 left over
    await settle()
    await window.end()

    assert [len(f) for f in inner.fetches] == [50, 50, 21]
    assert set((await fetch).unwrap().stats) == set(ids)
    assert set((await late).unwrap().stats) == {A}


async def test_a_failed_call_fails_only_the_fetches_that_needed_its_ids() -> None:
    inner, window = Inner(), Window()
    batcher = make(inner, window)
    full = [synthetic_video_id(n) for n in range(50)]
    inner.poisoned = {full[7]}

    unlucky = asyncio.create_task(batcher.fetch(full))  # a full call of its own, which fails
    await settle()
    lucky = asyncio.create_task(batcher.fetch([A]))
    await settle()
    await window.end()

    assert await unlucky == Failure(UpstreamUnavailable("503"))
    assert (await lucky).unwrap().stats == {A: synthetic_stats(A)}


async def test_a_fetch_that_stops_waiting_leaves_the_call_going_for_the_others() -> None:
    inner, window = Inner(), Window()
    inner.gate.clear()  # YouTube answers only when the test says
    batcher = make(inner, window)

    impatient = asyncio.create_task(batcher.fetch([A]))
    patient = asyncio.create_task(batcher.fetch([A, B]))
    await settle()
    await window.end()
    impatient.cancel()  # its request's deadline passed, or its client went away
    await settle()
    inner.gate.set()

    assert (await patient).unwrap().stats == {A: synthetic_stats(A), B: synthetic_stats(B)}
    assert impatient.cancelled()
    assert inner.fetches == [(A, B)]


async def test_an_empty_fetch_asks_nothing_and_opens_no_window() -> None:
    inner, window = Inner(), Window()

    assert await make(inner, window).fetch([]) == Success(VideoBatch({}, ()))
    assert inner.fetches == [] and window.started == []


async def test_an_id_already_in_flight_is_shared_not_asked_again() -> None:
    inner, window = Inner(), Window()
    batcher = make(inner, window)
    inner.gate.clear()
    first = asyncio.create_task(batcher.fetch([A, B]))
    await settle()
    await window.end()  # A and B are in flight now

    second = asyncio.create_task(batcher.fetch([B, C]))
    await settle()
    await window.end()
    inner.gate.set()

    assert (await first).unwrap().stats == {A: synthetic_stats(A), B: synthetic_stats(B)}
    assert (await second).unwrap().stats == {B: synthetic_stats(B), C: synthetic_stats(C)}
    assert inner.fetches == [(A, B), (C,)]


class SharesOf(Inner):
    """Refuses every fetch made on behalf of ``spent`` (its share is spent), as the shares would."""

    def __init__(self, spent: Caller) -> None:
        super().__init__()
        self.spent = spent
        self.on_behalf: list[Caller | None] = []

    async def fetch(self, ids: Sequence[VideoId]) -> Result[VideoBatch, UpstreamError]:
        self.on_behalf.append(CALLER.get())
        if CALLER.get() == self.spent:
            self.fetches.append(tuple(ids))
            return Failure(ShareSpent("spent", retry_after_s=60))
        return await super().fetch(ids)


def as_caller(
    caller: Caller, work: Coroutine[Any, Any, Result[VideoBatch, UpstreamError]]
) -> asyncio.Task[Result[VideoBatch, UpstreamError]]:
    context = contextvars.copy_context()
    context.run(CALLER.set, caller)
    return asyncio.create_task(work, context=context)


async def test_a_call_refused_for_its_senders_share_is_asked_again_only_for_the_other_clients() -> None:
    spent, other = Caller(None, "10.0.0.1", None), Caller(None, "10.0.0.2", None)
    inner, window = SharesOf(spent), Window()
    batcher = make(inner, window)

    opened = as_caller(spent, batcher.fetch([A, B]))  # opens the call: sent on its behalf
    await settle()
    joined = as_caller(other, batcher.fetch([B, C]))
    await settle()
    await window.end()

    refused = await opened
    assert isinstance(refused, Failure) and isinstance(refused.failure(), ShareSpent)
    assert (await joined).unwrap().stats == {B: synthetic_stats(B), C: synthetic_stats(C)}
    # The refused client's fetch is not asked again (it would be refused again); the other's is,
    # alone, on its own share.
    assert inner.fetches == [(A, B, C), (B, C)]
    assert inner.on_behalf == [spent, other]
