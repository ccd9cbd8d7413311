"""``/metrics`` as Prometheus scrapes it, with one worker and with several."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import httpx

from tests.raw_http import raw_request, request_bytes
from tests.support import RunningService, running_service, sample


def test_with_two_workers_the_counts_add_up_across_processes(tmp_path: Path) -> None:
    multiproc = tmp_path / "prom"
    multiproc.mkdir()
    env = {"PROMETHEUS_MULTIPROC_DIR": str(multiproc), "INFLUENCER_STATS_STORE": "dict"}
    command = [sys.executable, "-m", "uvicorn", "main:app", "--workers", "2", "--log-level", "warning"]
    healthz = {"route": "/healthz", "method": "GET", "status": "200"}
    with running_service([], tmp_path / "w.log", env=env, command=command) as service:
        for _ in range(40):
            httpx.get(f"{service.url}/healthz")  # a new connection each: spread over the workers
        # Workers share their values every second: a scrape sees all 40 within a few.
        deadline = time.monotonic() + 10
        while True:
            scrape = httpx.get(f"{service.url}/metrics").text
            if sample(scrape, "influencer_stats_http_requests_total", **healthz) >= 40:
                break
            assert time.monotonic() < deadline, f"the workers' counts never added up to 40:\n{scrape}"
            time.sleep(0.2)
        snapshots = {p.stem for p in multiproc.glob("*.json")}

    assert sample(scrape, "influencer_stats_http_requests_total", **healthz) >= 40  # + readiness probes
    assert len(snapshots) >= 2  # both workers wrote their values


def test_any_number_of_method_names_answers_400_and_adds_no_series(service: RunningService) -> None:
    """Granian passed M0…M1999 through, each its own label: /metrics grew to 121 MB."""
    before = httpx.get(f"{service.url}/metrics").text
    statuses = set()
    for n in range(300):
        path = ("/healthz", "/collections/c", "/collections/c/stats", "/nowhere")[n % 4]
        statuses.add(raw_request(service.url, request_bytes(f"M{n}".encode(), path.encode())).status)
    after = httpx.get(f"{service.url}/metrics").text

    assert statuses == {400}
    assert 'method="M' not in after
    series = [line for line in after.splitlines() if line.startswith("influencer_stats_http_requests_total{")]
    new = len(series) - before.count("influencer_stats_http_requests_total{")
    assert new <= 5  # "other" on the four routes tried, and the scrape itself
    assert len(after) - len(before) < 20_000
