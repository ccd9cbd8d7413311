"""perf/per_request.py for real: µs per stats request, layer by layer, of ``fast``'s RSGI app (the
granian server's, ``servers/granian/app.py``) beside ``guarded``. The granian server slice's: without
it there is no RSGI app of the service to time. No timing is asserted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support import ROOT


def test_per_request_times_each_layer_of_both_apps(tmp_path: Path) -> None:
    counts = ["--requests", "200", "--uncached-requests", "20", "--repeat", "1"]
    done = subprocess.run(
        [sys.executable, "-m", "perf.per_request", *counts, "--log", str(tmp_path / "services.log")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stderr[-3000:]
    for layer in (
        "RsgiApp.__rsgi__",
        "HttpApi.answer",
        "YouTubeVideoStatsSource.fetch",
        "Guarded.call",
        "stubbed",
    ):
        assert layer in done.stdout, layer
    assert done.stdout.count("Whole request: fast") == 3
    assert "stats.computed" in (tmp_path / "services.log").read_text()  # their logs, not the table's stream
