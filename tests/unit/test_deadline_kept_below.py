"""The request's deadline and the breaker kept by the YouTube base itself (the root's choice when
nothing else is between): one timer and one coroutine per request, the same answers as
``DeadlineSource`` and ``CircuitBreakerSource`` around it give, and the breaker counts none of the
deadline's timeouts."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest
from returns.result import Failure, Success

from influencer_stats.algebras import VideoStatsSource
from influencer_stats.bootstrap.root import build_source
from influencer_stats.domain.models import UpstreamTimeout, UpstreamUnavailable, VideoBatch, VideoId
from influencer_stats.interpreters.metrics.noop import NoMetrics
from influencer_stats.interpreters.videos.circuit_breaker import CircuitBreaker, CircuitBreakerSource
from influencer_stats.interpreters.videos.deadline import DeadlineSource
from influencer_stats.interpreters.videos.synthetic import synthetic_stats, synthetic_video_id
from influencer_stats.interpreters.youtube.call_gate import CallGate
from influencer_stats.interpreters.youtube.youtube_source import UpstreamPolicy, YouTubeVideoStatsSource
from influencer_stats.testing.event_log import CapturingEventLog
from tests.contract.wired import wired
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


def base(
    call: object, gate: CallGate | None = None, deadline_s: float | None = None, **policy: object
) -> YouTubeVideoStatsSource:
    settings = {"ids_per_call": 50, "call_timeout_s": 60.0, "retries": 2, **policy}
    return YouTubeVideoStatsSource(
        call,  # type: ignore[arg-type]
        UpstreamPolicy(**settings),  # type: ignore[arg-type]
        gate or CallGate(8, per_flow=8, max_waiting=100),
        CapturingEventLog(),
        NoMetrics(),
        clock=FakeTime().clock,
        rng=lambda: 1.0,  # the jitter's upper bound: deterministic delays
        deadline_s=deadline_s,
    )


def tripping() -> CircuitBreaker:
    """A breaker that opens at the first failure it counts."""
    return CircuitBreaker(FakeTime().clock, CapturingEventLog(), NoMetrics(), threshold=1, cooldown_s=60.0)


async def test_a_fetch_answered_in_time_passes_through() -> None:
    result = await base(ScriptedCall(), deadline_s=60.0).fetch([A])

    assert result == Success(VideoBatch({A: synthetic_stats(A)}, ()))


@pytest.mark.parametrize("ids", [IDS[:1], IDS], ids=["one call", "fan-out"])
async def test_a_call_past_the_deadline_is_cancelled_and_answers_the_deadlines_timeout(
    ids: list[VideoId],
) -> None:
    call = HangingCall()
    gate = CallGate(8, per_flow=8, max_waiting=100)

    result = await base(call, gate, deadline_s=0.05).fetch(ids)

    assert result == TIMED_OUT
    assert call.calls >= 1 and call.cancelled == call.calls
    assert gate.waiting == 0 and await gate.enter(None)  # every connection given back


async def test_a_wait_for_a_connection_past_the_deadline_answers_the_deadlines_timeout() -> None:
    gate = CallGate(1, per_flow=1, max_waiting=100)
    call = ScriptedCall()
    assert await gate.enter("another request")  # holds the only connection

    result = await base(call, gate, deadline_s=0.05).fetch([A])

    assert result == TIMED_OUT
    assert call.calls == [] and gate.waiting == 0  # no unit spent, its place left


async def test_a_retry_waiting_past_the_deadline_answers_the_deadlines_timeout() -> None:
    call = ScriptedCall([UpstreamUnavailable("503")] * 3)
    source = base(call, deadline_s=0.05, backoff_base_s=10.0, backoff_cap_s=10.0)

    started = asyncio.get_running_loop().time()
    result = await source.fetch([A])

    assert result == TIMED_OUT
    assert asyncio.get_running_loop().time() - started < 5.0  # the backoff was cut
    assert len(call.calls) == 1


async def test_the_calls_own_timeout_still_answers_first_when_it_ends_first() -> None:
    result = await base(HangingCall(), deadline_s=60.0, call_timeout_s=0.01).fetch([A])

    assert result == Failure(UpstreamTimeout("a videos.list call took over 0.01s"))


@pytest.mark.parametrize("ids", [IDS[:1], IDS], ids=["one call", "fan-out"])
@pytest.mark.parametrize("kept", [True, False], ids=["kept by the base", "layers around it"])
async def test_the_breaker_counts_no_deadline_timeout(kept: bool, ids: list[VideoId]) -> None:
    breaker = tripping()
    if kept:
        source: VideoStatsSource = base(HangingCall(), deadline_s=0.02).keeping(breaker=breaker)
    else:
        source = DeadlineSource(CircuitBreakerSource(base(HangingCall()), breaker), 0.02)

    assert await source.fetch(ids) == Failure(UpstreamTimeout("no complete answer within the 0.02s deadline"))
    assert breaker.state == "closed"


@pytest.mark.parametrize("ids", [IDS[:1], IDS], ids=["one call", "fan-out"])
async def test_the_breaker_kept_by_the_base_opens_on_youtubes_failure_and_then_fails_fast(
    ids: list[VideoId],
) -> None:
    call = ScriptedCall([UpstreamUnavailable("503")] * 10)
    source = base(call, deadline_s=60.0, retries=0).keeping(breaker=(breaker := tripping()))

    assert await source.fetch(ids) == Failure(UpstreamUnavailable("503"))
    made = len(call.calls)
    refused = await source.fetch(ids)

    assert breaker.state == "open"
    assert refused == Failure(UpstreamUnavailable("circuit open after repeated failures; last: 503"))
    assert len(call.calls) == made  # failed fast: no call


async def test_the_breaker_kept_by_the_base_lets_one_probe_through_which_closes_it() -> None:
    time = FakeTime()
    breaker = CircuitBreaker(time.clock, CapturingEventLog(), NoMetrics(), threshold=1, cooldown_s=5.0)
    call, answer = ScriptedCall([UpstreamUnavailable("503")]), asyncio.Event()

    async def held(ids: Sequence[VideoId]) -> CallResult:
        await answer.wait()
        return await call(ids)

    source = base(held, deadline_s=60.0, retries=0).keeping(breaker=breaker)
    answer.set()
    await source.fetch([A])
    time.now += 5.0
    answer.clear()

    probe = asyncio.ensure_future(source.fetch([A]))
    await asyncio.sleep(0)
    during = await source.fetch([A])  # while the probe runs
    answer.set()

    assert isinstance(during, Failure) and "circuit open" in during.failure().detail
    assert await probe == Success(VideoBatch({A: synthetic_stats(A)}, ()))
    assert breaker.state == "closed"


@pytest.mark.parametrize(
    ("wrappers", "outermost", "breaker_inside"),
    [
        ("breaker", YouTubeVideoStatsSource, True),
        ("none", YouTubeVideoStatsSource, False),
        ("batch,breaker", DeadlineSource, True),  # the batch's wait is its own
    ],
)
async def test_the_root_leaves_deadline_and_breaker_to_the_youtube_base_only_when_nothing_else_is_between(
    tmp_path: Path, wrappers: str, outermost: type, breaker_inside: bool
) -> None:
    flags = {"video_client": "aiohttp-batched", "video_wrappers": wrappers, "video_cache": "none"}
    async with wired(tmp_path, flags, youtube_url="http://127.0.0.1:9/youtube/v3/videos") as wiring:
        source = await build_source(wiring)

    assert type(source) is outermost
    youtube = source
    while not isinstance(youtube, YouTubeVideoStatsSource):
        youtube = youtube._inner  # type: ignore[attr-defined]
    assert (youtube.breaker is not None) is breaker_inside
    assert (youtube.deadline_s is not None) is (outermost is YouTubeVideoStatsSource)
