"""A circuit breaker: its state (``CircuitBreaker``), and a wrapper of any ``VideoStatsSource`` by it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Literal

from returns.result import Failure, Result, Success

from influencer_stats.algebras import EventLog, UpstreamMetrics, VideoStatsSource
from influencer_stats.domain.models import NOT_YOUTUBES_FAULT, UpstreamError, VideoBatch, VideoId

State = Literal["closed", "open", "half_open"]


class CircuitBreaker:
    """Fails fetches fast while the upstream is failing: the state, consulted around each fetch.

    After ``threshold`` consecutive failed fetches the circuit opens: for
    ``cooldown_s`` every fetch fails at once with the error that opened it
    (so a quota error still answers 503 with its ``Retry-After``), without
    calling the upstream. Then one fetch is let through (half-open): success
    closes the circuit, failure opens it for another cooldown; fetches that
    arrive while the probe runs fail fast. Failures of this service's own
    limits or state (``NOT_YOUTUBES_FAULT``: the daily budget spent, too many
    calls waiting, the shared quota count not answering; no call was made) are
    passed on and count neither way.

    Around each fetch: while ``state`` is not ``"closed"``, ``admit()`` first
    (a failure to answer at once, or None: the fetch goes, as the probe); then
    ``settle(result, probe)`` once it ends (``result`` None: it ended without
    an outcome, e.g. cancelled or cut by the request's deadline, which counts
    neither way). Nothing here awaits. The clock is injected.
    """

    def __init__(
        self,
        clock: Callable[[], float],
        log: EventLog,
        metrics: UpstreamMetrics,
        *,
        threshold: int,
        cooldown_s: float,
    ) -> None:
        self._clock = clock
        self._log = log
        self._metrics = metrics
        self._threshold = threshold
        self._cooldown_s = cooldown_s
        self._failures = 0
        self._opened_at = 0.0
        self._last_error: UpstreamError | None = None
        self._probing = False
        self.state: State = "closed"

    def admit(self) -> Failure[UpstreamError] | None:
        """While not closed: the failure to answer at once, or None (the fetch is the probe)."""
        if self.state == "closed":
            return None
        if self._probing or self._clock() - self._opened_at < self._cooldown_s:
            error = self._last_error
            assert error is not None
            return Failure(
                replace(error, detail=f"circuit open after repeated failures; last: {error.detail}")
            )
        self.state = "half_open"
        self._metrics.breaker_state("half_open")
        self._probing = True
        return None

    def settle(self, result: Result[object, UpstreamError] | None, probe: bool) -> None:
        """What a fetch admitted came to (None: nothing to judge by); ``probe``: it was the probe."""
        if probe:
            self._probing = False
        if isinstance(result, Success):
            if self.state != "closed" or self._failures:
                if self.state != "closed":
                    self._log.info("youtube.circuit_closed")
                    self._metrics.breaker_state("closed")
                self.state = "closed"
                self._failures = 0
        elif result is not None and not isinstance(result.failure(), NOT_YOUTUBES_FAULT):  # YouTube's
            self._on_failure(result.failure())

    def _on_failure(self, error: UpstreamError) -> None:
        self._failures += 1
        self._last_error = error
        if self.state == "half_open" or self._failures >= self._threshold:
            if self.state != "open":
                self._log.warning(
                    "youtube.circuit_opened",
                    failures=self._failures,
                    cooldown_s=self._cooldown_s,
                    error=type(error).__name__,
                )
            self.state = "open"
            self._metrics.breaker_state("open")
            self._opened_at = self._clock()


class CircuitBreakerSource:
    """``VideoStatsSource`` wrapper that consults ``breaker`` around each fetch of ``inner``:
    what the ``breaker`` video wrapper builds, whatever ``inner`` is."""

    def __init__(self, inner: VideoStatsSource, breaker: CircuitBreaker) -> None:
        self._inner = inner
        self._breaker = breaker

    @property
    def state(self) -> State:
        return self._breaker.state

    async def fetch(self, ids: Sequence[VideoId]) -> Result[VideoBatch, UpstreamError]:
        breaker = self._breaker
        probe = breaker.state != "closed"
        if probe:
            refused = breaker.admit()
            if refused is not None:
                return refused
        result = None
        try:
            result = await self._inner.fetch(ids)
        finally:
            breaker.settle(result, probe)
        return result
