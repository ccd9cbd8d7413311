"""A circuit breaker around any ``VideoStatsSource``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Literal

from returns.result import Failure, Result

from influencer_stats.algebras import EventLog, UpstreamMetrics, VideoStatsSource
from influencer_stats.domain.models import NOT_YOUTUBES_FAULT, UpstreamError, VideoBatch, VideoId

State = Literal["closed", "open", "half_open"]


class CircuitBreakerSource:
    """``VideoStatsSource`` wrapper that fails fast while the upstream is failing.

    After ``threshold`` consecutive failed fetches the circuit opens: for
    ``cooldown_s`` every fetch fails at once with the error that opened it
    (so a quota error still answers 503 with its ``Retry-After``), without
    calling the upstream. Then one fetch is let through (half-open): success
    closes the circuit, failure opens it for another cooldown; fetches that
    arrive while the probe runs fail fast. Failures of this service's own
    limits or state (``NOT_YOUTUBES_FAULT``: the daily budget spent, too many
    calls waiting, the shared quota count not answering; no call was made) are
    passed on and count neither way.
    The clock is injected.
    """

    def __init__(
        self,
        inner: VideoStatsSource,
        clock: Callable[[], float],
        log: EventLog,
        metrics: UpstreamMetrics,
        *,
        threshold: int,
        cooldown_s: float,
    ) -> None:
        self._inner = inner
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

    async def fetch(self, ids: Sequence[VideoId]) -> Result[VideoBatch, UpstreamError]:
        probe = False
        if self.state != "closed":
            if self._probing or self._clock() - self._opened_at < self._cooldown_s:
                return self._fail_fast()
            self.state = "half_open"
            self._metrics.breaker_state("half_open")
            self._probing = probe = True
        try:
            result = await self._inner.fetch(ids)
        finally:
            if probe:
                self._probing = False
        if isinstance(result, Failure):
            if not isinstance(result.failure(), NOT_YOUTUBES_FAULT):  # ours, not YouTube's
                self._on_failure(result.failure())
        elif self.state != "closed" or self._failures:
            if self.state != "closed":
                self._log.info("youtube.circuit_closed")
                self._metrics.breaker_state("closed")
            self.state = "closed"
            self._failures = 0
        return result

    def _fail_fast(self) -> Result[VideoBatch, UpstreamError]:
        assert self._last_error is not None
        error = self._last_error
        return Failure(replace(error, detail=f"circuit open after repeated failures; last: {error.detail}"))

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
