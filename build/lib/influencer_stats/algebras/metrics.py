"""Operational metrics."""

from __future__ import annotations

from typing import Protocol


class Metrics(Protocol):
    """Counters and histograms an operator scrapes (``GET /metrics``).

    Contract: recording never raises and never blocks; ``render`` returns
    the exposition body and its content type, aggregated over every worker
    process of the service when the interpreter supports it. Labels are
    bounded sets (route templates, not paths; error kinds, not messages).
    """

    def request(self, route: str, method: str, status: int, seconds: float) -> None: ...

    def upstream_call(self, outcome: str, seconds: float) -> None: ...

    def cache_event(self, kind: str) -> None: ...

    def loop_lag(self, seconds: float) -> None: ...

    def logs_dropped(self, count: int) -> None: ...

    def breaker_state(self, state: str) -> None: ...

    def video_cache_event(self, kind: str, count: int) -> None:
        """``count`` videos served by the video cache as ``kind`` (hit, miss, stale …)."""
        ...

    def calls_saved(self, by: str, count: int) -> None:
        """``count`` videos.list calls not made thanks to ``by`` (video_cache, batching)."""
        ...

    def quota(self, spent: int, left: int | None) -> None:
        """``spent`` more units spent; ``left`` of today's budget (None: no budget)."""
        ...

    def quota_stale_answer(self) -> None:
        """One answer served from what the caches hold because the day's budget is spent."""
        ...

    def render(self) -> tuple[bytes, str]: ...
