"""The perf lab's hand-written copies of the ``prometheus`` slice's names are the slice's.

``perf/guarded_answers.py`` renders the series ``fast`` records, and ``perf/soak.py`` reads two
of a scrape; both keep the names by hand (the core's perf lab runs without the slice), so here,
in the slice, they are compared with the names the service writes.
"""

from __future__ import annotations

from influencer_stats.bootstrap.edge import ROUTES
from influencer_stats.http.routes import STATS
from influencer_stats.interpreters.metrics import families
from influencer_stats.interpreters.metrics.prometheus import METHOD_LABELS, PrometheusMetrics
from perf import guarded_answers as answers
from perf import soak


def test_guarded_writes_the_services_metric_names_buckets_and_method_labels() -> None:
    assert answers.METHOD_LABELS == METHOD_LABELS
    assert answers.LATENCY_BUCKETS == families.LATENCY_BUCKETS
    names = (answers.REQUESTS, answers.LATENCY, answers.UPSTREAM, answers.UPSTREAM_LATENCY, answers.CACHE)
    assert names == (
        families.REQUESTS,
        families.LATENCY,
        families.UPSTREAM,
        families.UPSTREAM_LATENCY,
        families.CACHE,
    )


def test_the_soak_reads_the_services_loop_lag_and_dropped_log_events() -> None:
    assert (soak.LAG, soak.DROPPED) == (families.LAG, families.DROPPED)


def test_guarded_renders_a_request_as_the_service_does() -> None:
    service = PrometheusMetrics(ROUTES, None, version="0", quota_budget=None)
    reference = answers.Metrics()
    for metrics in (service, reference):
        metrics.request(STATS, "GET", 200, 0.003)
    scraped = service.render()[0].decode().splitlines()
    rendered = reference.render().decode().splitlines()

    requests = f'{families.REQUESTS}_total{{method="GET",route="{STATS}",status="200"}} 1.0'
    assert requests in scraped and requests.removesuffix(".0") in rendered
    bucket = f'{families.LATENCY}_bucket{{le="0.005",route="{STATS}"}} 1.0'
    assert bucket in scraped
    assert f'{families.LATENCY}_bucket{{route="{STATS}",le="0.005"}} 1' in rendered
