"""The circuit breaker, on a fake clock: no sleeps."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from returns.result import Failure, Result, Success

from influencer_stats.algebras import UpstreamMetrics
from influencer_stats.domain.models import (
    QuotaExceeded,
    QuotaExhausted,
    SharedStateUnavailable,
    UpstreamBusy,
    UpstreamError,
    UpstreamUnavailable,
    VideoBatch,
    VideoId,
)
from influencer_stats.interpreters.metrics.noop import NoMetrics
from influencer_stats.interpreters.videos.circuit_breaker import CircuitBreaker, CircuitBreakerSource
from influencer_stats.testing.clock import ManualClock as Clock
from influencer_stats.testing.event_log import CapturingEventLog
from tests.support import RecordingMetrics

IDS = [VideoId("-4lB5EKS5Uk")]
OK: Result[VideoBatch, UpstreamError] = Success(VideoBatch({}, tuple(IDS)))
DOWN: Result[VideoBatch, UpstreamError] = Failure(UpstreamUnavailable("500 backendError"))


class Upstream:
    def __init__(self) -> None:
        self.answer = DOWN
        self.calls = 0
        self.gate: asyncio.Event | None = None

    async def fetch(self, ids: Sequence[VideoId]) -> Result[VideoBatch, UpstreamError]:
        self.calls += 1
        if self.gate is not None:
            await self.gate.wait()
        return self.answer


def breaker(
    upstream: Upstream,
    clock: Clock,
    log: CapturingEventLog | None = None,
    metrics: UpstreamMetrics | None = None,
) -> CircuitBreakerSource:
    state = CircuitBreaker(
        clock, log or CapturingEventLog(), metrics or NoMetrics(), threshold=3, cooldown_s=5.0
    )
    return CircuitBreakerSource(upstream, state)


async def test_it_stays_closed_below_the_threshold() -> None:
    upstream, clock = Upstream(), Clock()
    cb = breaker(upstream, clock)

    for _ in range(2):
        await cb.fetch(IDS)

    assert cb.state == "closed"
    assert upstream.calls == 2


async def test_a_success_resets_the_consecutive_count() -> None:
    upstream, clock = Upstream(), Clock()
    cb = breaker(upstream, clock)

    await cb.fetch(IDS)
    await cb.fetch(IDS)
    upstream.answer = OK
    await cb.fetch(IDS)
    upstream.answer = DOWN
    await cb.fetch(IDS)
    await cb.fetch(IDS)

    assert cb.state == "closed"


async def test_after_n_consecutive_failures_it_fails_fast_without_calling() -> None:
    upstream, clock = Upstream(), Clock()
    log = CapturingEventLog()
    cb = breaker(upstream, clock, log)
    for _ in range(3):
        await cb.fetch(IDS)

    result = await cb.fetch(IDS)

    assert cb.state == "open"
    assert upstream.calls == 3
    assert isinstance(result, Failure)
    assert isinstance(result.failure(), UpstreamUnavailable)
    assert "circuit open" in result.failure().detail
    assert len(log.named("youtube.circuit_opened")) == 1


async def test_fail_fast_keeps_the_kind_of_error_that_opened_it() -> None:
    upstream, clock = Upstream(), Clock()
    upstream.answer = Failure(QuotaExceeded("403 quotaExceeded", retry_after_s=3600))
    cb = breaker(upstream, clock)
    for _ in range(3):
        await cb.fetch(IDS)

    result = await cb.fetch(IDS)

    assert isinstance(result, Failure)
    error = result.failure()
    assert isinstance(error, QuotaExceeded)
    assert error.retry_after_s == 3600


async def test_after_the_cooldown_one_probe_goes_through_and_success_closes() -> None:
    upstream, clock = Upstream(), Clock()
    cb = breaker(upstream, clock)
    for _ in range(3):
        await cb.fetch(IDS)
    clock.now += 4.9
    assert isinstance(await cb.fetch(IDS), Failure)
    assert upstream.calls == 3

    clock.now += 0.2
    upstream.answer = OK
    result = await cb.fetch(IDS)

    assert result == OK
    assert cb.state == "closed"
    assert upstream.calls == 4


async def test_a_failed_probe_opens_it_for_another_cooldown() -> None:
    upstream, clock = Upstream(), Clock()
    cb = breaker(upstream, clock)
    for _ in range(3):
        await cb.fetch(IDS)
    clock.now += 5.0

    await cb.fetch(IDS)  # the probe fails
    clock.now += 4.0
    await cb.fetch(IDS)

    assert cb.state == "open"
    assert upstream.calls == 4


async def test_while_the_probe_runs_other_fetches_fail_fast() -> None:
    upstream, clock = Upstream(), Clock()
    cb = breaker(upstream, clock)
    for _ in range(3):
        await cb.fetch(IDS)
    clock.now += 5.0
    upstream.answer, upstream.gate = OK, asyncio.Event()

    probe = asyncio.create_task(cb.fetch(IDS))
    await asyncio.sleep(0)  # let the probe reach the upstream
    during = await cb.fetch(IDS)
    upstream.gate.set()

    assert isinstance(during, Failure)
    assert await probe == OK
    assert upstream.calls == 4
    assert cb.state == "closed"


async def test_every_change_of_state_is_recorded_as_a_metric() -> None:
    upstream, clock, metrics = Upstream(), Clock(), RecordingMetrics()
    cb = breaker(upstream, clock, metrics=metrics)
    for _ in range(3):
        await cb.fetch(IDS)
    clock.now += 5.0
    upstream.answer = OK

    await cb.fetch(IDS)

    assert metrics.breaker_states == ["open", "half_open", "closed"]


@pytest.mark.parametrize(
    "ours",
    [
        QuotaExhausted("the day's budget is spent", retry_after_s=60),
        UpstreamBusy("2,048 YouTube calls are waiting for a connection"),
        SharedStateUnavailable("the shared quota count did not answer"),
    ],
    ids=lambda error: type(error).__name__,
)
async def test_failures_of_this_services_own_limits_or_state_never_open_it(ours: UpstreamError) -> None:
    upstream, clock = Upstream(), Clock()
    upstream.answer = Failure(ours)
    cb = breaker(upstream, clock)

    for _ in range(10):
        assert await cb.fetch(IDS) == Failure(ours)
    upstream.answer = OK

    assert cb.state == "closed"
    assert await cb.fetch(IDS) == OK
    assert upstream.calls == 11
