"""``/metrics`` counts the stats cache's events (the ``stats_cache`` slice's part of test_metrics.py)."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.support import running_service, sample


def test_metrics_count_requests_cache_events_and_loop_lag(tmp_path: Path) -> None:
    with running_service(["--cache", "stats"], tmp_path / "m.log") as service:
        httpx.put(f"{service.url}/collections/m", json={"videos": ["-4lB5EKS5Uk"]})
        for _ in range(5):
            httpx.get(f"{service.url}/collections/m/stats")
        httpx.get(f"{service.url}/collections/nope/stats")
        scrape = httpx.get(f"{service.url}/metrics")

    text = scrape.text
    assert scrape.status_code == 200
    assert scrape.headers["content-type"].startswith("text/plain")
    route = "/collections/{id}/stats"
    assert sample(text, "influencer_stats_http_requests_total", route=route, method="GET", status="200") == 5
    assert sample(text, "influencer_stats_http_requests_total", route=route, method="GET", status="404") == 1
    assert sample(text, "influencer_stats_cache_events_total", kind="hit") == 4
    assert sample(text, "influencer_stats_cache_events_total", kind="miss") == 2
    assert sample(text, "influencer_stats_http_request_duration_seconds_count", route=route) == 6
    assert "influencer_stats_event_loop_lag_seconds_bucket" in text
    assert "influencer_stats_log_events_dropped_total" in text
    assert "influencer_stats_circuit_breaker_open" in text
