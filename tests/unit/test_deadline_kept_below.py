"""The request's deadline kept by the YouTube base (``DeadlineSource`` unarmed): one timer per request,
the same answers as the armed deadline's, and the breaker between counts none of its timeouts."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from returns.result import Failure, Success

from influencer_stats.bootstrap.videos import keeps_deadline
from influencer_stats.domain.models import UpstreamTimeout, UpstreamUnavailable, VideoBatch, VideoId
from influencer_stats.interpreters.metrics.noop import NoMetrics
from influencer_stats.interpreters.videos.call_gate import CallGate
from influencer_stats.interpreters.videos.circuit_breaker import CircuitBreakerSource
from influencer_stats.interpreters.videos.deadline import DeadlineSource
from influencer_stats.interpreters.videos.synthetic import synthetic_stats, synthetic_video_id
from influencer_stats.interpreters.videos.youtube_source import UpstreamPolicy, YouTubeVideoStatsSource
from influencer_stats.testing.event_log import CapturingEventLog
from tests.unit.test_youtube_source import CallResult, FakeTime, ScriptedCall

A = synthetic_video_id(1)
IDS = [synthetic_video_id(n) for n in range(120)]
TIMED_OUT = Failure(UpstreamTimeout("no complete answer within the 0.05s deadline"))


class HangingCall:
    """Never answers; counts the calls made and the ones cancelled."""

    def __init__(self) -> None:
        self.calls = 0
        self.cancelled = 0

    async def __call__(self, ids: Sequence[VideoId]) -> CallResult:
        self.calls += 1
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        raise AssertionError("unreachable")


def base(call: object, gate: CallGate | None = None, **policy: object) -> YouTubeVideoStatsSource:
    settings = {"ids_per_call": 50, "call_timeout_s": 60.0, "retries": 2, **policy}
    return YouTubeVideoStatsSource(
        call,  # type: ignore[arg-type]
        UpstreamPolicy(**settings),  # type: ignore[arg-type]
        gate or CallGate(8, per_flow=8, max_waiting=100),
        CapturingEventLog(),
        NoMetrics(),
        clock=FakeTime().clock,
        rng=lambda: 1.0,  # the jitter's upper bound: deterministic delays
    )


async def test_a_fetch_answered_in_time_passes_through() -> None:
    result = await DeadlineSource(base(ScriptedCall()), 60.0, armed=False).fetch([A])

    assert result == Success(VideoBatch({A: synthetic_stats(A)}, ()))


@pytest.mark.parametrize("ids", [IDS[:1], IDS], ids=["one call", "fan-out"])
async def test_a_call_past_the_deadline_is_cancelled_and_answers_the_deadlines_timeout(
    ids: list[VideoId],
) -> None:
    call = HangingCall()
    gate = CallGate(8, per_flow=8, max_waiting=100)

    result = await DeadlineSource(base(call, gate), 0.05, armed=False).fetch(ids)

    assert result == TIMED_OUT
    assert call.calls >= 1 and call.cancelled == call.calls
    assert gate.waiting == 0 and await gate.enter(None)  # every connection given back


async def test_a_wait_for_a_connection_past_the_deadline_answers_the_deadlines_timeout() -> None:
    gate = CallGate(1, per_flow=1, max_waiting=100)
    call = ScriptedCall()
    assert await gate.enter("another request")  # holds the only connection

    result = await DeadlineSource(base(call, gate), 0.05, armed=False).fetch([A])

    assert result == TIMED_OUT
    assert call.calls == [] and gate.waiting == 0  # no unit spent, its place left


async def test_a_retry_waiting_past_the_deadline_answers_the_deadlines_timeout() -> None:
    call = ScriptedCall([UpstreamUnavailable("503")] * 3)
    source = base(call, backoff_base_s=10.0, backoff_cap_s=10.0)

    started = asyncio.get_running_loop().time()
    result = await DeadlineSource(source, 0.05, armed=False).fetch([A])

    assert result == TIMED_OUT
    assert asyncio.get_running_loop().time() - started < 5.0  # the backoff was cut
    assert len(call.calls) == 1


async def test_the_calls_own_timeout_still_answers_first_when_it_ends_first() -> None:
    result = await DeadlineSource(base(HangingCall(), call_timeout_s=0.01), 60.0, armed=False).fetch([A])

    assert result == Failure(UpstreamTimeout("a videos.list call took over 0.01s"))


@pytest.mark.parametrize("armed", [True, False])
async def test_the_breaker_between_counts_no_deadline_timeout(armed: bool) -> None:
    breaker = CircuitBreakerSource(
        base(HangingCall()), FakeTime().clock, CapturingEventLog(), NoMetrics(), threshold=1, cooldown_s=60.0
    )
    source = DeadlineSource(breaker, 0.02, armed=armed)

    assert await source.fetch([A]) == Failure(UpstreamTimeout("no complete answer within the 0.02s deadline"))
    assert breaker.state == "closed"


def test_the_root_leaves_the_deadline_to_the_youtube_base_only_through_the_breaker() -> None:
    assert keeps_deadline("aiohttp-batched", ["breaker"])
    assert keeps_deadline("httpx", [])
    assert not keeps_deadline("aiohttp-batched", ["batch", "breaker"])  # the batch's wait is its own
    assert not keeps_deadline("fake", [])
