"""The deadline around a source no per-video cache answers for: a timeout value, a flow per fetch."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from returns.result import Failure, Result, Success

from influencer_stats.domain.models import UpstreamError, UpstreamTimeout, VideoBatch, VideoId
from influencer_stats.interpreters.videos.deadline import DeadlineSource
from influencer_stats.interpreters.videos.synthetic import synthetic_stats
from influencer_stats.interpreters.youtube.call_gate import current_flow

A = VideoId("aaaaaaaaaaa")


class Inner:
    """Answers at once, or never (``hang``); records the flow each fetch ran in."""

    def __init__(self, *, hang: bool = False) -> None:
        self.hang = hang
        self.flows: list[object | None] = []
        self.cancelled = 0

    async def fetch(self, ids: Sequence[VideoId]) -> Result[VideoBatch, UpstreamError]:
        self.flows.append(current_flow())
        if self.hang:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        return Success(VideoBatch({i: synthetic_stats(i) for i in ids}, ()))


async def test_a_fetch_answered_in_time_passes_through() -> None:
    result = await DeadlineSource(Inner(), 60.0).fetch([A])

    assert result == Success(VideoBatch({A: synthetic_stats(A)}, ()))


async def test_a_fetch_past_the_deadline_fails_with_a_timeout_and_its_calls_are_cancelled() -> None:
    inner = Inner(hang=True)

    result = await DeadlineSource(inner, 0.0).fetch([A])  # 0 s: over at its first wait

    assert result == Failure(UpstreamTimeout("no complete answer within the 0s deadline"))
    assert inner.cancelled == 1


async def test_each_fetch_is_a_flow_of_its_own_for_the_call_gate() -> None:
    inner = Inner()
    source = DeadlineSource(inner, 60.0)

    await asyncio.gather(source.fetch([A]), source.fetch([A]))

    first, second = inner.flows
    assert first is not None and second is not None and first is not second
    assert current_flow() is None
