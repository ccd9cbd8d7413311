"""guarded (perf/guarded.py, one module) records the metrics fast records: the prometheus slice's
half of test_perf_guarded (without the slice ``/metrics`` records nothing, and guarded's hand-kept
names are compared with the service's by tests/unit/test_prometheus_guarded.py)."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.test_perf_guarded import (  # the pair of services and what they answered
    REQUESTS,
    STATS_ROUTE,
    cache,  # noqa: F401 - fixtures the pair is made of
    double_url,  # noqa: F401
    exchanged,  # noqa: F401
    pair,  # noqa: F401
)
from tests.support import RunningService


def _request_metrics(url: str) -> dict[str, dict[tuple[str, ...], float]]:
    """The stats route's request counts and latency count, and the cache events, from ``/metrics``."""
    text = httpx.get(url + "/metrics", timeout=10).text
    found: dict[str, dict[tuple[str, ...], float]] = {"requests": {}, "latency": {}, "cache": {}}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = sample.labels
            if sample.name == "influencer_stats_http_requests_total" and labels["route"] == STATS_ROUTE:
                found["requests"][(labels["method"], labels["status"])] = sample.value
            elif (
                sample.name == "influencer_stats_http_request_duration_seconds_count"
                and labels["route"] == STATS_ROUTE
            ):
                found["latency"][()] = sample.value
            elif sample.name == "influencer_stats_cache_events_total":
                found["cache"][(labels["kind"],)] = sample.value
    return found


def test_guarded_records_the_requests_latency_and_cache_metrics_fast_records(
    pair: tuple[RunningService, RunningService],  # noqa: F811 - the imported fixtures
    exchanged: object,  # noqa: F811
) -> None:
    fast, guarded = pair

    mine, theirs = _request_metrics(guarded.url), _request_metrics(fast.url)

    assert mine == theirs
    assert mine["latency"][()] == sum(mine["requests"].values()) == len(REQUESTS)
