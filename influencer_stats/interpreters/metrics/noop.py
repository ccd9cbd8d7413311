"""Metrics that record nothing."""

from __future__ import annotations

from functools import partial

from influencer_stats.algebras.metrics import RequestRecorder


class NoMetrics:
    """``AllMetrics`` (every role) that discards everything; ``/metrics`` says so."""

    def request(self, route: str, method: str, status: int, seconds: float) -> None:
        pass

    def recorder(self, route: str, method: str) -> RequestRecorder:
        # Through ``request``, so a subclass that records requests records these too.
        return partial(self.request, route, method)

    def upstream_call(self, outcome: str, seconds: float) -> None:
        pass

    def cache_event(self, kind: str) -> None:
        pass

    def loop_lag(self, seconds: float) -> None:
        pass

    def logs_dropped(self, count: int) -> None:
        pass

    def dependency(self, name: str, up: bool) -> None:
        pass

    def breaker_state(self, state: str) -> None:
        pass

    def video_cache_event(self, kind: str, count: int) -> None:
        pass

    def calls_saved(self, by: str, count: int) -> None:
        pass

    def quota(self, spent: int, left: int | None) -> None:
        pass

    def quota_stale_answer(self) -> None:
        pass

    def render(self) -> tuple[bytes, str]:
        return b"# metrics record nothing here (--metrics none)\n", "text/plain; version=0.0.4; charset=utf-8"
