"""``--workers 2`` as the ``prometheus`` slice sees it: each worker counts in a snapshot named by its pid.

- Each server: keep-alive connections opened at once, and requests on new
  connections, are answered by two worker processes (each writes its metrics
  snapshot, named by its pid, to the directory created for the run: one
  process could not pass), and only by workers (never the supervisor).
- A directory the user gives (``PROMETHEUS_MULTIPROC_DIR``) is used, one scrape
  sums every worker, and it is left in place with the final snapshots.
- A directory the workers cannot write in: one line naming it, exit 1.

The rest of ``--workers`` (agreement, stop, refusals) is the ``workers`` slice's test_workers.py; this
suite is the joint ``prometheus__workers``' (``bootstrap/slices/prometheus__workers.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import pytest

from influencer_stats.interpreters.metrics.prometheus import REQUESTS
from influencer_stats.interpreters.metrics.snapshots import Snapshot
from tests.integration.test_first_run import _start
from tests.integration.test_workers import (
    ONE_SHOT,
    QUICK_STOP,
    SHARED,
    _requests_on_connections_opened_at_once,
    _stop_and_collect,
    _wait_for,
    _wait_until_every_worker_listens,
)
from tests.support import SERVERS, SHARED_STORE_ARGS, children_of, running_service

ROUNDS = 100
#: Two workers on a store they share (and its server, if it needs one).
pytestmark = pytest.mark.usefixtures("shared_store_server")


def _requests_by_pid(directory: Path, route: str | None = None) -> dict[int, float]:
    """Requests (to ``route``, or any) each worker counted, from the metrics snapshot it names by its pid."""
    counted = {}
    for path in directory.glob("*.json"):
        if path.stem.isdigit():
            try:
                snapshot = Snapshot.from_json(path.read_bytes())
            except (OSError, ValueError):  # being replaced: read it next time
                continue
            series = snapshot.counters.get(REQUESTS, {})  # labels: route, method, status
            counted[int(path.stem)] = sum(n for labels, n in series.items() if route in (None, labels[0]))
    return counted


def _served_by_two(counted: dict[int, float], total: int) -> bool:
    """Two processes answered requests, together at least ``total``."""
    return len([n for n in counted.values() if n > 0]) >= 2 and sum(counted.values()) >= total


def _healthz_requests(scraped: str) -> float:
    counted = [line for line in scraped.splitlines() if 'route="/healthz"' in line and "_total" in line]
    return sum(float(line.split()[-1]) for line in counted)


@pytest.mark.parametrize("server", SERVERS)
def test_two_workers_each_count_what_they_answer_in_a_snapshot_named_by_their_pid(
    server: str, tmp_path: Path
) -> None:
    temp = tmp_path / "tmp"  # where the service creates its metrics directory
    temp.mkdir()
    env = {**QUICK_STOP, "TMPDIR": str(temp)}
    with (
        running_service(["--server", server, *SHARED], tmp_path / "service.log", env=env) as service,
        httpx.Client(base_url=service.url, timeout=10, limits=ONE_SHOT) as http,
    ):
        [metrics] = temp.glob("influencer-stats-metrics-*")
        _wait_until_every_worker_listens(service)
        # Keep-alive connections opened at once (a benchmark's, a proxy's pool) reach both workers
        # (nothing else asks for /readyz).
        spread = _requests_on_connections_opened_at_once(service, 32, "/readyz")
        spread_over_two = _wait_for(lambda: _served_by_two(_requests_by_pid(metrics, "/readyz"), 32), 5)
        for _ in range(ROUNDS):
            assert http.get("/healthz").status_code == 200
        workers = children_of(service.process.pid)
        # Each worker publishes its counters every second, in a file named by its pid.
        both = _wait_for(lambda: _served_by_two(_requests_by_pid(metrics), 32 + ROUNDS), 5)
        counted = _requests_by_pid(metrics)
        code = _stop_and_collect(service)

    assert spread == [200] * 32
    assert spread_over_two
    assert both, counted
    assert set(counted) <= workers and service.process.pid not in counted
    assert code == 0
    assert not metrics.exists()


def test_a_metrics_directory_the_user_gives_is_used_and_left_in_place(tmp_path: Path) -> None:
    # On the default profile's server: every server's workers share one directory (the test above).
    mine = tmp_path / "metrics"
    mine.mkdir()
    env = {**QUICK_STOP, "PROMETHEUS_MULTIPROC_DIR": str(mine), "TMPDIR": str(tmp_path)}
    with (
        running_service(SHARED, tmp_path / "service.log", env=env) as service,
        httpx.Client(base_url=service.url, timeout=10, limits=ONE_SHOT) as http,
    ):
        _wait_until_every_worker_listens(service)
        for _ in range(50):
            assert http.get("/healthz").status_code == 200
        published = _wait_for(lambda: _served_by_two(_requests_by_pid(mine), 50), 5)
        # One scrape (of either worker) adds up both: each other worker's last snapshot is at most 1 s old.
        summed = _wait_for(lambda: _healthz_requests(http.get("/metrics").text) >= 50, 5)

    assert published and summed
    assert mine.is_dir() and len(list(mine.glob("*.json"))) == 2  # the final snapshots stay too
    assert not list(tmp_path.glob("influencer-stats-metrics-*"))


@pytest.mark.parametrize("server", SERVERS)
def test_a_metrics_folder_workers_cannot_write_in_is_one_line_naming_it_and_exit_1(
    server: str, tmp_path: Path
) -> None:
    # It served, and each worker's last metrics snapshot ended in a traceback at shutdown.
    (tmp_path / "a-file").write_text("not a folder\n")
    folder = tmp_path / "a-file" / "metrics"
    argv = [sys.executable, "main.py", "--server", server, *SHARED_STORE_ARGS, "--workers", "2"]

    result = _start(argv, tmp_path, {"PROMETHEUS_MULTIPROC_DIR": str(folder)})

    assert result.returncode == 1, result.stderr[-3000:]
    assert result.stderr == (
        f"influencer-stats: error: PROMETHEUS_MULTIPROC_DIR={folder}: cannot write a file in it: Not a directory\n"
    )
