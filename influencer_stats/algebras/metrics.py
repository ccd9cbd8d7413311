"""Operational metrics, one Protocol per role: each part of the service records only its own.

``Metrics`` is the HTTP edge's (requests, and ``GET /metrics`` itself); the
YouTube base records ``UpstreamMetrics``, the caches and the batcher
``CacheMetrics``, the process ``RuntimeMetrics``. A metrics interpreter
(Prometheus, none) is ``AllMetrics``, every role at once, and the composition
root hands each part the role it records.

Contract of every role: recording never raises and never blocks. Labels are
bounded sets (route templates, not paths; error kinds, not messages).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

#: A request's metrics for one route and method, labels resolved: ``record(status, seconds)``.
RequestRecorder = Callable[[int, float], None]


class Metrics(Protocol):
    """What the HTTP edge records, and the scrape it answers (``GET /metrics``).

    ``render`` returns the exposition body and its content type, aggregated
    over every worker process of the service when the interpreter supports it.
    ``recorder(route, method)`` is ``request`` with those two given, resolved
    once (the edge builds one per route and method): calling it records
    exactly what ``request(route, method, status, seconds)`` would.
    """

    def request(self, route: str, method: str, status: int, seconds: float) -> None: ...

    def recorder(self, route: str, method: str) -> RequestRecorder: ...

    def render(self) -> tuple[bytes, str]: ...


class UpstreamMetrics(Protocol):
    """What calls to YouTube record: the YouTube source, its circuit breaker, the quota governor."""

    def upstream_call(self, outcome: str, seconds: float) -> None: ...

    def breaker_state(self, state: str) -> None: ...

    def quota(self, spent: int, left: int | None) -> None:
        """``spent`` more units spent; ``left`` of today's budget (None: no budget)."""
        ...


class CacheMetrics(Protocol):
    """What the caches serve, and the calls they and the batcher save."""

    def cache_event(self, kind: str) -> None:
        """One stats-cache answer as ``kind`` (hit, miss, stale, stale_if_error)."""
        ...

    def video_cache_event(self, kind: str, count: int) -> None:
        """``count`` videos served by the video cache as ``kind`` (hit, miss, stale …)."""
        ...

    def calls_saved(self, by: str, count: int) -> None:
        """``count`` videos.list calls not made thanks to ``by`` (video_cache, batching)."""
        ...

    def quota_stale_answer(self) -> None:
        """One answer served from what the caches hold because the day's budget is spent."""
        ...


class RuntimeMetrics(Protocol):
    """How the process itself fares: its event loop's lag, the log events it dropped, and
    whether its dependencies answer."""

    def loop_lag(self, seconds: float) -> None: ...

    def logs_dropped(self, count: int) -> None: ...

    def dependency(self, name: str, up: bool) -> None:
        """Whether dependency ``name`` (one of ``/readyz``'s checks) answered when last checked."""
        ...


class AllMetrics(Metrics, UpstreamMetrics, CacheMetrics, RuntimeMetrics, Protocol):
    """Every role at once: what a metrics interpreter is, and what the composition root holds."""
