"""The Prometheus interpreter: exposition format, buckets, and summing several workers."""

from __future__ import annotations

import gc
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from influencer_stats.bootstrap.edge import ROUTES
from influencer_stats.interpreters.metrics.prometheus import PrometheusMetrics

STATS = "/collections/{id}/stats"


def samples(metrics: PrometheusMetrics) -> list[Sample]:
    body, content_type = metrics.render()
    assert content_type.startswith("text/plain; version=")
    return [s for family in text_string_to_metric_families(body.decode()) for s in family.samples]


def value(metrics: PrometheusMetrics, name: str, **labels: str) -> float:
    found = [s.value for s in samples(metrics) if s.name == name and s.labels == labels]
    assert len(found) == 1, f"{name}{labels}: {found}"
    return found[0]


def test_requests_are_counted_by_route_method_and_status() -> None:
    metrics = PrometheusMetrics(ROUTES)
    for status in (200, 200, 404):
        metrics.request(STATS, "GET", status, 0.001)
    metrics.request("/collections/{id}", "PUT", 201, 0.002)

    name = "influencer_stats_http_requests_total"
    assert value(metrics, name, route=STATS, method="GET", status="200") == 2
    assert value(metrics, name, route=STATS, method="GET", status="404") == 1
    assert value(metrics, name, route="/collections/{id}", method="PUT", status="201") == 1


def test_a_histogram_puts_a_value_equal_to_a_bound_into_that_bucket_and_is_cumulative() -> None:
    metrics = PrometheusMetrics(ROUTES)
    for seconds in (0.0005, 0.0006, 0.001, 7.0):
        metrics.request(STATS, "GET", 200, seconds)

    name = "influencer_stats_http_request_duration_seconds"
    assert value(metrics, f"{name}_bucket", route=STATS, le="0.0005") == 1
    assert value(metrics, f"{name}_bucket", route=STATS, le="0.001") == 3
    assert value(metrics, f"{name}_bucket", route=STATS, le="5.0") == 3
    assert value(metrics, f"{name}_bucket", route=STATS, le="+Inf") == 4
    assert value(metrics, f"{name}_count", route=STATS) == 4
    assert abs(value(metrics, f"{name}_sum", route=STATS) - 7.0021) < 1e-9


def test_cache_upstream_lag_drops_and_breaker_are_exposed() -> None:
    metrics = PrometheusMetrics(ROUTES)
    metrics.cache_event("hit")
    metrics.cache_event("hit")
    metrics.cache_event("stale")
    metrics.upstream_call("ok", 0.02)
    metrics.upstream_call("QuotaExceeded", 0.01)
    metrics.loop_lag(0.003)
    metrics.logs_dropped(5)
    metrics.logs_dropped(2)
    metrics.breaker_state("open")

    assert value(metrics, "influencer_stats_cache_events_total", kind="hit") == 2
    assert value(metrics, "influencer_stats_cache_events_total", kind="stale") == 1
    assert value(metrics, "influencer_stats_upstream_calls_total", outcome="QuotaExceeded") == 1
    assert value(metrics, "influencer_stats_upstream_call_duration_seconds_count") == 2
    assert value(metrics, "influencer_stats_event_loop_lag_seconds_bucket", le="0.0025") == 0
    assert value(metrics, "influencer_stats_event_loop_lag_seconds_bucket", le="0.005") == 1
    assert value(metrics, "influencer_stats_log_events_dropped_total") == 7
    assert value(metrics, "influencer_stats_circuit_breaker_open") == 1
    metrics.breaker_state("closed")
    assert value(metrics, "influencer_stats_circuit_breaker_open") == 0


def test_two_thousand_method_names_add_no_series_and_no_bytes() -> None:
    """The attack that grew Granian's /metrics to 121 MB: every method name its own label."""
    metrics = PrometheusMetrics(ROUTES)
    metrics.request(STATS, "M0", 405, 0.001)
    before = metrics.render()[0]
    for n in range(1, 2_000):
        metrics.request(STATS, f"M{n}", 405, 0.001)
        metrics.request(f"/made/up/{n}", f"M{n}", 404, 0.001)
    after = metrics.render()[0]

    name = "influencer_stats_http_requests_total"
    assert value(metrics, name, route=STATS, method="other", status="405") == 2_000
    assert value(metrics, name, route="unmatched", method="other", status="404") == 1_999
    assert b"M1" not in after and b"/made/up" not in after
    assert len(after) - len(before) < 2_000  # one more series and its histogram, not 4,000


@pytest.mark.parametrize(
    ("status", "label"),
    [(200, "200"), (418, "418"), (499, "4xx"), (599, "5xx"), (1000, "other"), (-1, "other")],
)
def test_a_status_label_is_a_registered_code_or_its_class(status: int, label: str) -> None:
    metrics = PrometheusMetrics(ROUTES)
    metrics.request(STATS, "GET", status, 0.001)

    assert (
        value(metrics, "influencer_stats_http_requests_total", route=STATS, method="GET", status=label) == 1
    )


def test_only_the_route_templates_given_are_route_labels() -> None:
    metrics = PrometheusMetrics(["/only"])
    metrics.request("/only", "PUT", 200, 0.001)
    metrics.request(STATS, "PROPFIND", 200, 0.001)

    name = "influencer_stats_http_requests_total"
    assert value(metrics, name, route="/only", method="PUT", status="200") == 1
    assert value(metrics, name, route="unmatched", method="other", status="200") == 1
    service = PrometheusMetrics(ROUTES)  # the service's route table, as the root builds it
    for template in ROUTES:
        service.request(template, "GET", 200, 0.001)
    assert {sample.labels["route"] for sample in samples(service) if sample.name == name} == set(ROUTES)


@pytest.mark.parametrize(
    ("route", "method"), [(STATS, "GET"), ("/collections/{id}", "PUT"), ("/made/up", "PROPFIND")]
)
def test_a_recorder_records_exactly_what_request_does_and_no_series_before_its_first_call(
    route: str, method: str
) -> None:
    by_request, by_recorder = PrometheusMetrics(ROUTES), PrometheusMetrics(ROUTES)
    record = by_recorder.recorder(route, method)
    http = "influencer_stats_http_"
    assert not [s for s in samples(by_recorder) if s.name.startswith(http)]  # nothing before a request

    for status, seconds in ((200, 0.0005), (200, 0.003), (404, 0.001), (499, 7.0), (1000, 0.002)):
        by_request.request(route, method, status, seconds)
        record(status, seconds)
        assert by_recorder.snapshot().counters == by_request.snapshot().counters
        assert by_recorder.snapshot().histograms == by_request.snapshot().histograms


def test_a_recorder_and_request_share_one_latency_series_whichever_records_first() -> None:
    metrics = PrometheusMetrics(ROUTES)
    record = metrics.recorder(STATS, "GET")
    metrics.request(STATS, "HEAD", 200, 0.001)
    record(200, 0.001)
    metrics.request(STATS, "HEAD", 200, 0.001)

    name = "influencer_stats_http_request_duration_seconds"
    assert value(metrics, f"{name}_count", route=STATS) == 3


def test_label_values_are_escaped() -> None:
    metrics = PrometheusMetrics(ROUTES)
    metrics.upstream_call('weird "outcome"\nwith a newline\\', 0.01)

    assert (
        value(metrics, "influencer_stats_upstream_calls_total", outcome='weird "outcome"\nwith a newline\\')
        == 1
    )


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True
    )
    return int(child.stdout)


def test_workers_add_up_through_their_snapshots(tmp_path: Path) -> None:
    peer_pid, gone_pid = os.getppid(), dead_pid()  # a process that is alive, one that is not
    live_peer = PrometheusMetrics(ROUTES, str(tmp_path), pid=peer_pid)
    gone = PrometheusMetrics(ROUTES, str(tmp_path), pid=gone_pid)
    me = PrometheusMetrics(ROUTES, str(tmp_path))
    for _ in range(3):
        live_peer.request(STATS, "GET", 200, 0.001)
    gone.request(STATS, "GET", 200, 0.001)
    gone.breaker_state("open")  # a stopped worker's breaker says nothing about the service now
    me.request(STATS, "GET", 200, 0.001)
    live_peer.publish()
    gone.publish()

    name = "influencer_stats_http_requests_total"
    assert value(me, name, route=STATS, method="GET", status="200") == 5  # counters of the dead count
    assert value(me, "influencer_stats_http_request_duration_seconds_count", route=STATS) == 5
    assert value(me, "influencer_stats_circuit_breaker_open") == 0
    live_peer.breaker_state("half_open")
    live_peer.publish()
    assert value(me, "influencer_stats_circuit_breaker_open") == 1
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == sorted(f"{pid}.json" for pid in (peer_pid, gone_pid, os.getpid()))  # a scrape writes


def test_a_worker_reads_others_snapshots_but_its_own_values_live(tmp_path: Path) -> None:
    me = PrometheusMetrics(ROUTES, str(tmp_path))
    me.request(STATS, "GET", 200, 0.001)
    me.publish()
    me.request(STATS, "GET", 200, 0.001)

    assert value(me, "influencer_stats_http_requests_total", route=STATS, method="GET", status="200") == 2


def test_a_counter_never_goes_down_whichever_worker_answers_each_scrape(tmp_path: Path) -> None:
    """Scrapes alternate between two workers, which publish only every fifth round: before, worker
    two showed worker one's file of rounds before, below what worker one had just shown."""
    one = PrometheusMetrics(ROUTES, str(tmp_path), pid=os.getpid())
    two = PrometheusMetrics(ROUTES, str(tmp_path), pid=os.getppid())
    shown: list[float] = []
    for round_ in range(20):
        for worker, requests in ((one, 7), (two, 3)):
            for _ in range(requests):
                worker.request(STATS, "GET", 200, 0.001)
            if round_ % 5 == 0:
                worker.publish()  # the publisher's turn
        scraped = (one, two)[round_ % 2]
        shown.append(value(scraped, "influencer_stats_http_request_duration_seconds_count", route=STATS))
        count = value(
            scraped, "influencer_stats_http_requests_total", route=STATS, method="GET", status="200"
        )
        assert count == shown[-1]

    assert shown == sorted(shown), shown
    assert shown[-1] >= 190  # each sees the other at most a round behind (200 in all)


def test_a_torn_or_foreign_file_in_the_directory_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "123.json").write_bytes(b'{"counters": ')
    (tmp_path / "notes.json").write_bytes(b"[]")
    me = PrometheusMetrics(ROUTES, str(tmp_path))
    me.cache_event("miss")

    assert value(me, "influencer_stats_cache_events_total", kind="miss") == 1


def test_quota_economy_is_exposed_calls_saved_by_wrapper_and_units_left_only_with_a_budget() -> None:
    metrics = PrometheusMetrics(ROUTES)
    assert not [s for s in samples(metrics) if s.name == "influencer_stats_quota_units_left"]

    metrics.video_cache_event("hit", 40)
    metrics.video_cache_event("miss", 3)
    metrics.calls_saved("video_cache", 2)
    metrics.calls_saved("batching", 5)
    metrics.quota(1, 9)
    metrics.quota(1, 8)
    metrics.quota(0, 0)
    metrics.quota_stale_answer()

    assert value(metrics, "influencer_stats_video_cache_videos_total", kind="hit") == 40
    assert value(metrics, "influencer_stats_video_cache_videos_total", kind="miss") == 3
    assert value(metrics, "influencer_stats_upstream_calls_saved_total", by="video_cache") == 2
    assert value(metrics, "influencer_stats_upstream_calls_saved_total", by="batching") == 5
    assert value(metrics, "influencer_stats_quota_units_spent_total") == 2
    assert value(metrics, "influencer_stats_quota_units_left") == 0
    assert value(metrics, "influencer_stats_quota_stale_answers_total") == 1


def test_workers_show_the_least_budget_any_of_them_saw_left(tmp_path: Path) -> None:
    one = PrometheusMetrics(ROUTES, str(tmp_path), pid=os.getpid())
    two = PrometheusMetrics(ROUTES, str(tmp_path), pid=os.getppid())  # alive, so its gauge counts
    one.quota(1, 70)
    two.quota(1, 40)
    two.publish()

    assert value(one, "influencer_stats_quota_units_left") == 40
    assert value(one, "influencer_stats_quota_units_spent_total") == 2


RUNTIME = ("process_cpu_seconds_total", "process_resident_memory_bytes", "process_start_time_seconds")
GC = "python_gc_collections_total"


def test_build_info_names_the_version_and_python_and_process_and_gc_series_are_this_process() -> None:
    metrics = PrometheusMetrics(ROUTES, version="1.2.3", revision="1a2b3c4")
    python = platform.python_version()

    assert (
        value(metrics, "influencer_stats_build_info", version="1.2.3", revision="1a2b3c4", python=python) == 1
    )
    unknown = PrometheusMetrics(ROUTES, version="1.2.3")  # a checkout's: the build knew no revision
    assert value(unknown, "influencer_stats_build_info", version="1.2.3", revision="", python=python) == 1
    assert time.time() - 86_400 < value(metrics, "process_start_time_seconds") <= time.time()  # today
    assert value(metrics, "process_resident_memory_bytes") > 1_000_000
    assert value(metrics, "process_open_fds") >= 3
    gc.collect()
    assert value(metrics, GC, generation="2") >= 1
    assert {s.labels["generation"] for s in samples(metrics) if s.name == GC} == {"0", "1", "2"}


def test_the_quota_budget_and_each_dependency_checked_are_exposed() -> None:
    assert not [s for s in samples(PrometheusMetrics(ROUTES)) if "budget" in s.name]
    metrics = PrometheusMetrics(ROUTES, quota_budget=10_000)
    metrics.dependency("redis", up=False)
    metrics.dependency("sqlite", up=True)

    assert value(metrics, "influencer_stats_quota_units_budget") == 10_000
    assert value(metrics, "influencer_stats_dependency_up", dependency="redis") == 0
    assert value(metrics, "influencer_stats_dependency_up", dependency="sqlite") == 1
    metrics.dependency("redis", up=True)
    assert value(metrics, "influencer_stats_dependency_up", dependency="redis") == 1


def test_with_workers_each_live_one_has_its_own_process_series_by_pid(tmp_path: Path) -> None:
    peer_pid, gone_pid = os.getppid(), dead_pid()
    me = PrometheusMetrics(ROUTES, str(tmp_path), version="1.2.3")
    for pid in (peer_pid, gone_pid):
        PrometheusMetrics(ROUTES, str(tmp_path), pid=pid).publish()

    for name in RUNTIME:  # a stopped worker's process is no fact about the service now
        assert {s.labels["pid"] for s in samples(me) if s.name == name} == {str(os.getpid()), str(peer_pid)}
    assert value(me, GC, generation="0", pid=str(peer_pid)) >= 0
    builds = [s for s in samples(me) if s.name == "influencer_stats_build_info"]
    assert [s.labels["version"] for s in builds] == ["1.2.3"]


def test_with_workers_a_dependency_is_down_if_any_live_worker_finds_it_down(tmp_path: Path) -> None:
    me = PrometheusMetrics(ROUTES, str(tmp_path))
    peer = PrometheusMetrics(ROUTES, str(tmp_path), pid=os.getppid())
    gone = PrometheusMetrics(ROUTES, str(tmp_path), pid=dead_pid())
    me.dependency("redis", up=True)
    gone.dependency("redis", up=False)
    gone.publish()
    assert value(me, "influencer_stats_dependency_up", dependency="redis") == 1

    peer.dependency("redis", up=False)
    peer.publish()
    assert value(me, "influencer_stats_dependency_up", dependency="redis") == 0
