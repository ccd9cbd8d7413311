"""What ``/metrics`` shows: every metric's name and help, and the families of merged values.

The names here are the ones deploy/prometheus/ (rules) and deploy/grafana/ (the
dashboard) use; tests/integration/test_prometheus.py checks that each one they
name is in a real scrape.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)

from influencer_stats.interpreters.metrics.runtime import build_info, runtime_families
from influencer_stats.interpreters.metrics.snapshots import Labels, Snapshot

LATENCY_BUCKETS: Final = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
_LAG_BUCKETS: Final = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)

REQUESTS: Final = "influencer_stats_http_requests"
LATENCY: Final = "influencer_stats_http_request_duration_seconds"
UPSTREAM: Final = "influencer_stats_upstream_calls"
UPSTREAM_LATENCY: Final = "influencer_stats_upstream_call_duration_seconds"
CACHE: Final = "influencer_stats_cache_events"
LAG: Final = "influencer_stats_event_loop_lag_seconds"
DROPPED: Final = "influencer_stats_log_events_dropped"
BREAKER: Final = "influencer_stats_circuit_breaker_open"
VIDEO_CACHE: Final = "influencer_stats_video_cache_videos"
SAVED: Final = "influencer_stats_upstream_calls_saved"
QUOTA_SPENT: Final = "influencer_stats_quota_units_spent"
QUOTA_STALE: Final = "influencer_stats_quota_stale_answers"
QUOTA_LEFT: Final = "influencer_stats_quota_units_left"
QUOTA_BUDGET: Final = "influencer_stats_quota_units_budget"
DEPENDENCY_UP: Final = "influencer_stats_dependency_up"
BUILD_INFO: Final = "influencer_stats_build_info"


@dataclass(frozen=True, slots=True)
class _Spec:
    help: str
    labels: Labels = ()
    buckets: tuple[float, ...] = ()  # histograms only


COUNTERS: Final[Mapping[str, _Spec]] = {
    REQUESTS: _Spec("HTTP requests by route, method and status", ("route", "method", "status")),
    UPSTREAM: _Spec("YouTube videos.list calls by outcome", ("outcome",)),
    CACHE: _Spec("stats cache hits, misses and stale serves", ("kind",)),
    DROPPED: _Spec("log events dropped by the rate limit"),
    VIDEO_CACHE: _Spec("videos the video cache served, by kind (hit, miss, stale …)", ("kind",)),
    SAVED: _Spec("videos.list calls not made, by the wrapper that saved them", ("by",)),
    QUOTA_SPENT: _Spec("YouTube quota units spent by this service (one per videos.list call)"),
    QUOTA_STALE: _Spec("answers served from the caches because the day's quota budget is spent"),
}
HISTOGRAMS: Final[Mapping[str, _Spec]] = {
    LATENCY: _Spec("HTTP request latency", ("route",), LATENCY_BUCKETS),
    UPSTREAM_LATENCY: _Spec("YouTube call latency", (), LATENCY_BUCKETS),
    LAG: _Spec("how late the event loop runs a scheduled callback", (), _LAG_BUCKETS),
}
_BREAKER_HELP: Final = "1 while the YouTube circuit breaker is open or half-open"
_QUOTA_LEFT_HELP: Final = "units left of today's quota budget (absent without a budget)"

_QUOTA_BUDGET_HELP: Final = "units this deployment may spend per quota day (absent without a budget)"
_DEPENDENCY_HELP: Final = "1 while a dependency /readyz checks answers (checked every few seconds), else 0"


def families(
    values: Snapshot, version: str, quota_budget: int | None, revision: str = ""
) -> Iterator[Metric]:
    """The service's metric families from ``values`` (one process's, or merged over workers)."""
    for name, spec in COUNTERS.items():
        counter = CounterMetricFamily(name, spec.help, labels=spec.labels)
        for labels, value in sorted(values.counters.get(name, {}).items()):
            counter.add_metric(labels, value)
        if not spec.labels and not values.counters.get(name):
            counter.add_metric((), 0.0)
        yield counter
    for name, spec in HISTOGRAMS.items():
        histogram = HistogramMetricFamily(name, spec.help, labels=spec.labels)
        for labels, (counts, total) in sorted(values.histograms.get(name, {}).items()):
            cumulative, buckets = 0, []
            for bound, count in zip((*spec.buckets, float("inf")), counts, strict=True):
                cumulative += count
                buckets.append((_le(bound), float(cumulative)))
            histogram.add_metric(labels, buckets, total)
        yield histogram
    gauge = GaugeMetricFamily(BREAKER, _BREAKER_HELP)
    gauge.add_metric((), values.breaker_open)
    yield gauge
    if quota_budget is not None:
        yield GaugeMetricFamily(QUOTA_BUDGET, _QUOTA_BUDGET_HELP, value=float(quota_budget))
    if values.quota_left is not None:
        yield GaugeMetricFamily(QUOTA_LEFT, _QUOTA_LEFT_HELP, value=values.quota_left)
    dependencies = GaugeMetricFamily(DEPENDENCY_UP, _DEPENDENCY_HELP, labels=("dependency",))
    for name, up in sorted(values.dependencies.items()):
        dependencies.add_metric((name,), up)
    yield dependencies
    yield build_info(BUILD_INFO, version, revision)
    yield from runtime_families(values.runtime)


def _le(bound: float) -> str:
    return "+Inf" if bound == float("inf") else repr(bound)
