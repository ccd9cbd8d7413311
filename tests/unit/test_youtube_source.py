"""Fan-out, batching, the call gate and retries of the YouTube source, on fakes.

Time is a fake clock advanced by a fake sleep: no test waits for real time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from returns.result import Failure, Result, Success

from influencer_stats.algebras.youtube import VideosListCall
from influencer_stats.domain.models import (
    InvalidUpstreamData,
    QuotaExceeded,
    StatsByVideo,
    UpstreamBusy,
    UpstreamError,
    UpstreamMisconfigured,
    UpstreamTimeout,
    UpstreamUnavailable,
    VideoBatch,
    VideoId,
)
from influencer_stats.interpreters.metrics.noop import NoMetrics
from influencer_stats.interpreters.videos.synthetic import is_unknown, synthetic_stats, synthetic_video_id
from influencer_stats.interpreters.youtube.call_gate import CallGate
from influencer_stats.interpreters.youtube.youtube_source import UpstreamPolicy, YouTubeVideoStatsSource
from influencer_stats.testing.event_log import CapturingEventLog

CallResult = Result[StatsByVideo, UpstreamError]


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class ScriptedCall:
    """A videos.list call that answers from the synthetic world, or with scripted failures."""

    def __init__(self, failures: Sequence[UpstreamError] = ()) -> None:
        self.failures = list(failures)
        self.calls: list[tuple[VideoId, ...]] = []

    async def __call__(self, ids: Sequence[VideoId]) -> CallResult:
        self.calls.append(tuple(ids))
        if self.failures:
            return Failure(self.failures.pop(0))
        return Success({i: synthetic_stats(i) for i in ids if not is_unknown(i)})


#: The policy of every test unless it says otherwise.
POLICY: dict[str, Any] = {"ids_per_call": 50, "call_timeout_s": 1.0, "retries": 2}


def make_source(
    call: VideosListCall,
    time: FakeTime,
    log: CapturingEventLog | None = None,
    gate: CallGate | None = None,
    **policy: Any,
) -> YouTubeVideoStatsSource:
    return YouTubeVideoStatsSource(
        call,
        UpstreamPolicy(**{**POLICY, **policy}),
        gate or CallGate(64, per_flow=16, max_waiting=100),
        log or CapturingEventLog(),
        NoMetrics(),
        clock=time.clock,
        sleep=time.sleep,
        rng=lambda: 1.0,  # the jitter's upper bound: deterministic delays
    )


IDS = [synthetic_video_id(n) for n in range(120)] + [VideoId("X0000000001")]


async def test_batched_calls_carry_at_most_50_ids_and_cover_every_id_once() -> None:
    call = ScriptedCall()

    result = await make_source(call, FakeTime(), ids_per_call=50).fetch(IDS)

    assert [len(c) for c in call.calls] == [50, 50, 21]
    assert [i for c in call.calls for i in c] == IDS
    assert result == Success(
        VideoBatch({i: synthetic_stats(i) for i in IDS[:120]}, (VideoId("X0000000001"),))
    )


async def test_per_video_calls_make_one_call_per_id() -> None:
    call = ScriptedCall()

    await make_source(call, FakeTime(), ids_per_call=1).fetch(IDS)

    assert sorted(call.calls) == sorted((i,) for i in IDS)


async def test_calls_run_concurrently_up_to_the_gates_share_per_request() -> None:
    in_flight = peak = 0
    release = asyncio.Event()

    class SlowCall(ScriptedCall):
        async def __call__(self, ids: Sequence[VideoId]) -> CallResult:
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            if peak == 4:
                release.set()
            await release.wait()
            in_flight -= 1
            return await super().__call__(ids)

    gate = CallGate(64, per_flow=4, max_waiting=100)
    result = await make_source(SlowCall(), FakeTime(), gate=gate, ids_per_call=1).fetch(IDS[:20])

    assert peak == 4
    assert isinstance(result, Success)


async def test_a_transient_failure_is_retried_with_growing_backoff_then_succeeds() -> None:
    time = FakeTime()
    call = ScriptedCall([UpstreamUnavailable("500"), UpstreamUnavailable("503")])

    result = await make_source(call, time, backoff_base_s=0.1, backoff_cap_s=1.0).fetch(IDS[:3])

    assert isinstance(result, Success)
    assert len(call.calls) == 3
    assert time.sleeps == [0.1, 0.2]


async def test_retries_stop_after_two() -> None:
    call = ScriptedCall([UpstreamUnavailable("500")] * 5)

    result = await make_source(call, FakeTime()).fetch(IDS[:3])

    assert result == Failure(UpstreamUnavailable("500"))
    assert len(call.calls) == 3


async def test_backoff_is_capped() -> None:
    time = FakeTime()
    call = ScriptedCall([UpstreamUnavailable("500")] * 5)

    await make_source(call, time, retries=4, backoff_base_s=0.1, backoff_cap_s=0.25).fetch(IDS[:3])

    assert time.sleeps == [0.1, 0.2, 0.25, 0.25]


@pytest.mark.parametrize(
    "error",
    [QuotaExceeded("403 quotaExceeded"), UpstreamMisconfigured("400 keyInvalid"), InvalidUpstreamData("bad")],
)
async def test_non_transient_failures_are_never_retried(error: UpstreamError) -> None:
    call = ScriptedCall([error] * 3)

    result = await make_source(call, FakeTime()).fetch(IDS[:3])

    assert result == Failure(error)
    assert len(call.calls) == 1


async def test_after_a_failure_calls_not_yet_started_are_not_made() -> None:
    call = ScriptedCall([QuotaExceeded("403")])

    gate = CallGate(64, per_flow=1, max_waiting=100)
    result = await make_source(call, FakeTime(), gate=gate, ids_per_call=1).fetch(IDS[:10])

    assert isinstance(result, Failure)
    assert len(call.calls) == 1


async def test_a_misconfiguration_is_logged_loudly_once() -> None:
    log = CapturingEventLog()
    source = make_source(ScriptedCall([UpstreamMisconfigured("400 keyInvalid")] * 3), FakeTime(), log)

    for _ in range(3):
        await source.fetch(IDS[:1])

    [event] = log.named("youtube.misconfigured")
    assert event.level == "error"


async def test_a_call_that_never_answers_times_out_as_a_value() -> None:
    class HangingCall:
        async def __call__(self, ids: Sequence[VideoId]) -> CallResult:
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

    result = await make_source(HangingCall(), FakeTime(), call_timeout_s=0.01).fetch(IDS[:1])

    assert isinstance(result, Failure)
    assert isinstance(result.failure(), UpstreamTimeout)


async def test_an_attempt_waits_for_a_connection_before_its_timer_starts_and_spends_nothing_meanwhile() -> (
    None
):
    gate = CallGate(1, per_flow=1, max_waiting=100)
    call = ScriptedCall()
    assert await gate.enter("another request")  # holds the only connection
    # A timeout of 0 s fires at the first moment the attempt waits inside its timer: so it
    # succeeds only if the wait for the connection is outside it.
    source = make_source(call, FakeTime(), gate=gate, call_timeout_s=0.0)
    fetch = asyncio.create_task(source.fetch(IDS[:1]))
    for _ in range(10):
        await asyncio.sleep(0)  # the attempt waits for the connection meanwhile

    assert call.calls == []  # no unit spent while waiting
    gate.leave("another request")
    result = await fetch

    assert isinstance(result, Success)
    assert call.calls == [tuple(IDS[:1])]


async def test_when_too_many_calls_wait_for_a_connection_a_call_fails_busy_at_once() -> None:
    gate = CallGate(1, per_flow=1, max_waiting=0)
    call = ScriptedCall()
    assert await gate.enter("another request")

    result = await make_source(call, FakeTime(), gate=gate).fetch(IDS[:1])

    assert isinstance(result, Failure)
    assert isinstance(result.failure(), UpstreamBusy)
    assert call.calls == []


async def test_a_fetch_that_is_cancelled_cancels_its_calls_and_gives_back_every_connection() -> None:
    gate = CallGate(2, per_flow=16, max_waiting=100)
    started = asyncio.Event()

    class HangingCall:
        async def __call__(self, ids: Sequence[VideoId]) -> CallResult:
            started.set()
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

    fetch = asyncio.create_task(
        make_source(HangingCall(), FakeTime(), gate=gate, ids_per_call=1).fetch(IDS[:5])
    )
    await started.wait()
    fetch.cancel()
    with pytest.raises(asyncio.CancelledError):
        await fetch

    assert gate.waiting == 0
    assert await gate.enter(None) and await gate.enter(None)  # both connections are free again


async def test_an_empty_request_makes_no_call() -> None:
    call = ScriptedCall()

    assert await make_source(call, FakeTime()).fetch([]) == Success(VideoBatch({}, ()))
    assert call.calls == []


async def test_ids_the_upstream_returns_but_nobody_asked_for_are_ignored() -> None:
    class Chatty(ScriptedCall):
        async def __call__(self, ids: Sequence[VideoId]) -> CallResult:
            return Success(
                {**{i: synthetic_stats(i) for i in ids}, VideoId("zzzzzzzzzzz"): synthetic_stats("z")}
            )

    result = await make_source(Chatty(), FakeTime()).fetch(IDS[:2])

    assert result == Success(VideoBatch({i: synthetic_stats(i) for i in IDS[:2]}, ()))
