"""Prometheus metrics, correct with one process or many."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.multiprocess import MultiProcessCollector

_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
_LAG_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class PrometheusMetrics:
    """``Metrics`` in the Prometheus text format.

    With ``multiprocess_dir`` (the ``PROMETHEUS_MULTIPROC_DIR`` that must be
    set in the environment *before* the process starts, so prometheus_client
    writes its values to shared files) ``render`` aggregates every worker's
    values; without it, this process's. Label children are cached, so
    recording costs a dict lookup and an increment.
    """

    def __init__(self, multiprocess_dir: str | None = None) -> None:
        self._multiprocess_dir = multiprocess_dir
        self._registry = CollectorRegistry()
        r = self._registry
        self._requests = Counter(
            "influencer_stats_http_requests",
            "HTTP requests by route, method and status",
            ["route", "method", "status"],
            registry=r,
        )
        self._latency = Histogram(
            "influencer_stats_http_request_duration_seconds",
            "HTTP request latency",
            ["route"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self._upstream = Counter(
            "influencer_stats_upstream_calls", "YouTube videos.list calls by outcome", ["outcome"], registry=r
        )
        self._upstream_latency = Histogram(
            "influencer_stats_upstream_call_duration_seconds",
            "YouTube call latency",
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self._cache = Counter(
            "influencer_stats_cache_events", "stats cache hits, misses and stale serves", ["kind"], registry=r
        )
        self._lag = Histogram(
            "influencer_stats_event_loop_lag_seconds",
            "how late the event loop runs a scheduled callback",
            buckets=_LAG_BUCKETS,
            registry=r,
        )
        self._dropped = Counter(
            "influencer_stats_log_events_dropped", "log events dropped by the rate limit", registry=r
        )
        self._breaker = Gauge(
            "influencer_stats_circuit_breaker_open",
            "1 while the YouTube circuit breaker is open or half-open",
            registry=r,
            multiprocess_mode="livemax",
        )
        self._children: dict[tuple[str, str, int], Callable[[], None]] = {}
        self._route_latency: dict[str, Callable[[float], None]] = {}
        self._outcomes: dict[str, Callable[[], None]] = {}
        self._cache_kinds: dict[str, Callable[[], None]] = {}

    def request(self, route: str, method: str, status: int, seconds: float) -> None:
        key = (route, method, status)
        inc = self._children.get(key)
        if inc is None:
            inc = self._children[key] = self._requests.labels(route, method, str(status)).inc
        inc()
        observe = self._route_latency.get(route)
        if observe is None:
            observe = self._route_latency[route] = self._latency.labels(route).observe
        observe(seconds)

    def upstream_call(self, outcome: str, seconds: float) -> None:
        inc = self._outcomes.get(outcome)
        if inc is None:
            inc = self._outcomes[outcome] = self._upstream.labels(outcome).inc
        inc()
        self._upstream_latency.observe(seconds)

    def cache_event(self, kind: str) -> None:
        inc = self._cache_kinds.get(kind)
        if inc is None:
            inc = self._cache_kinds[kind] = self._cache.labels(kind).inc
        inc()

    def loop_lag(self, seconds: float) -> None:
        self._lag.observe(seconds)

    def logs_dropped(self, count: int) -> None:
        self._dropped.inc(count)

    def breaker_state(self, state: str) -> None:
        self._breaker.set(0 if state == "closed" else 1)

    def render(self) -> tuple[bytes, str]:
        if self._multiprocess_dir is None:
            return generate_latest(self._registry), CONTENT_TYPE_LATEST
        aggregate = CollectorRegistry()
        MultiProcessCollector(aggregate, path=self._multiprocess_dir)  # type: ignore[no-untyped-call]
        return generate_latest(aggregate), CONTENT_TYPE_LATEST
