"""The request's deadline and the breaker as the layers the root builds around the YouTube base
(``DeadlineSource`` outermost, ``CircuitBreakerSource`` inside it), whatever is inside them: the
deadline cuts every wait of a fetch, and the breaker counts none of the deadline's timeouts. And
the stack each profile builds is the one ``--list-profiles`` describes."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest
from returns.result import Failure, Success

from influencer_stats.algebras import VideoStatsSource
from influencer_stats.bootstrap.root import build_video_stats
from influencer_stats.config.profiles import PROFILES
from influencer_stats.config.resolve import resolve_choices
from influencer_stats.domain.models import UpstreamTimeout, UpstreamUnavailable, VideoBatch, VideoId
from influencer_stats.interpreters.metrics.noop import NoMetrics
from influencer_stats.interpreters.videos.circuit_breaker import CircuitBreaker, CircuitBreakerSource
from influencer_stats.interpreters.videos.deadline import DeadlineSource
from influencer_stats.interpreters.videos.fake import FakeVideoStatsSource
from influencer_stats.interpreters.videos.synthetic import synthetic_stats, synthetic_video_id
from influencer_stats.interpreters.youtube.call_gate import CallGate
from influencer_stats.interpreters.youtube.youtube_source import UpstreamPolicy, YouTubeVideoStatsSource
from influencer_stats.testing.event_log import CapturingEventLog
from tests.contract.wired import wired
from tests.support import YOUTUBE_CLIENTS, instead_of_slices
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


def tripping(time: FakeTime | None = None, cooldown_s: float = 60.0) -> CircuitBreaker:
    """A breaker that opens at the first failure it counts."""
    clock = (time or FakeTime()).clock
    return CircuitBreaker(clock, CapturingEventLog(), NoMetrics(), threshold=1, cooldown_s=cooldown_s)


def stack(youtube: YouTubeVideoStatsSource, breaker: CircuitBreaker, deadline_s: float) -> VideoStatsSource:
    """What the root builds for a real client with ``breaker`` and no per-video cache."""
    return DeadlineSource(CircuitBreakerSource(youtube, breaker), deadline_s)


async def test_a_fetch_answered_in_time_passes_through() -> None:
    result = await stack(base(ScriptedCall()), tripping(), 60.0).fetch([A])

    assert result == Success(VideoBatch({A: synthetic_stats(A)}, ()))


@pytest.mark.parametrize("ids", [IDS[:1], IDS], ids=["one call", "fan-out"])
async def test_a_call_past_the_deadline_is_cancelled_and_answers_the_deadlines_timeout(
    ids: list[VideoId],
) -> None:
    call = HangingCall()
    gate = CallGate(8, per_flow=8, max_waiting=100)

    result = await stack(base(call, gate), tripping(), 0.05).fetch(ids)

    assert result == TIMED_OUT
    assert call.calls >= 1 and call.cancelled == call.calls
    assert gate.waiting == 0 and await gate.enter(None)  # every connection given back


async def test_a_wait_for_a_connection_past_the_deadline_answers_the_deadlines_timeout() -> None:
    gate = CallGate(1, per_flow=1, max_waiting=100)
    call = ScriptedCall()
    assert await gate.enter("another request")  # holds the only connection

    result = await stack(base(call, gate), tripping(), 0.05).fetch([A])

    assert result == TIMED_OUT
    assert call.calls == [] and gate.waiting == 0  # no unit spent, its place left


async def test_a_retry_waiting_past_the_deadline_answers_the_deadlines_timeout() -> None:
    call = ScriptedCall([UpstreamUnavailable("503")] * 3)
    source = stack(base(call, backoff_base_s=10.0, backoff_cap_s=10.0), tripping(), 0.05)

    started = asyncio.get_running_loop().time()
    result = await source.fetch([A])

    assert result == TIMED_OUT
    assert asyncio.get_running_loop().time() - started < 5.0  # the backoff was cut
    assert len(call.calls) == 1


async def test_the_calls_own_timeout_still_answers_first_when_it_ends_first() -> None:
    result = await stack(base(HangingCall(), call_timeout_s=0.01), tripping(), 60.0).fetch([A])

    assert result == Failure(UpstreamTimeout("a videos.list call took over 0.01s"))


@pytest.mark.parametrize("ids", [IDS[:1], IDS], ids=["one call", "fan-out"])
async def test_the_breaker_counts_no_deadline_timeout(ids: list[VideoId]) -> None:
    breaker = tripping()

    result = await stack(base(HangingCall()), breaker, 0.02).fetch(ids)

    assert result == Failure(UpstreamTimeout("no complete answer within the 0.02s deadline"))
    assert breaker.state == "closed"


@pytest.mark.parametrize("ids", [IDS[:1], IDS], ids=["one call", "fan-out"])
async def test_the_breaker_opens_on_youtubes_failure_and_then_fails_fast(ids: list[VideoId]) -> None:
    call = ScriptedCall([UpstreamUnavailable("503")] * 10)
    source = stack(base(call, retries=0), breaker := tripping(), 60.0)

    assert await source.fetch(ids) == Failure(UpstreamUnavailable("503"))
    made = len(call.calls)
    refused = await source.fetch(ids)

    assert breaker.state == "open"
    assert refused == Failure(UpstreamUnavailable("circuit open after repeated failures; last: 503"))
    assert len(call.calls) == made  # failed fast: no call


async def test_the_breaker_lets_one_probe_through_which_closes_it() -> None:
    time = FakeTime()
    breaker = tripping(time, cooldown_s=5.0)
    call, answer = ScriptedCall([UpstreamUnavailable("503")]), asyncio.Event()

    async def held(ids: Sequence[VideoId]) -> CallResult:
        await answer.wait()
        return await call(ids)

    source = stack(base(held, retries=0), breaker, 60.0)
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


#: The class each video wrapper and client is built as, by name (a slice's is named, not imported:
#: the test holds without it); a name registered without one here fails.
LAYERS: dict[str, str] = {
    "breaker": CircuitBreakerSource.__name__,
    "batch": "BatchingSource",  # the batching slice's
    "fake": FakeVideoStatsSource.__name__,
    **dict.fromkeys(YOUTUBE_CLIENTS, YouTubeVideoStatsSource.__name__),  # each calls videos.list over HTTP
}


def _layers(source: object) -> list[str]:
    """The class names of ``source`` and of the sources it wraps, outermost first."""
    found = []
    for _ in range(20):  # a stack is a few layers deep
        found.append(type(source).__name__)
        inner = getattr(source, "_inner", None)
        if inner is None:
            return found
        source = inner
    raise AssertionError(f"a stack deeper than 20 layers: {found}")


@pytest.mark.parametrize("profile", list(PROFILES))
async def test_each_profiles_uncached_video_stack_is_the_one_list_profiles_describes(
    tmp_path: Path, profile: str
) -> None:
    # --list-profiles prints each profile's video-client and video-wrappers; without a per-video
    # cache the root puts the request's deadline outermost. Each layer is built as declared.
    choices, _ = resolve_choices(PROFILES[profile], instead_of_slices(profile), {})
    wrappers = choices["video_wrappers"]
    flags = {
        "video_client": choices.one("video_client"),
        "video_wrappers": choices.text("video_wrappers"),
        "video_cache": "none",
    }
    async with wired(tmp_path, flags, youtube_url="http://127.0.0.1:9/youtube/v3/videos") as wiring:
        source = await build_video_stats(wiring)

    expected = [
        DeadlineSource.__name__,
        *(LAYERS[name] for name in wrappers),
        LAYERS[choices.one("video_client")],
    ]
    assert _layers(source) == expected
