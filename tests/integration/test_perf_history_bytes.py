"""perf/history_bytes.py in a short run: every interpreter fed, measured and checked, a well-formed table.

Sizes are not asserted beyond being positive (the full run's figures are in perf/RESULTS.md);
only that each step ran, that every history ends with the count the script computes without
the retention, and that both feeds end in the same points. redis-server is required, not
optional: scripts/perf-up.sh installs it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

TIMEOUT_S = 120.0


def run_script(args: list[str]) -> subprocess.CompletedProcess[str]:
    """``perf/history_bytes.py ARGS`` in its own process group, killed whole if it overruns."""
    process = subprocess.Popen(
        [sys.executable, "perf/history_bytes.py", *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGTERM)  # its redis-server is in the group too
        try:
            out, err = process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate(timeout=20)
        pytest.fail(f"perf/history_bytes.py did not finish within {TIMEOUT_S:g}s:\n{err[-3000:]}")
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def test_a_short_run_measures_every_interpreter_and_both_feeds(tmp_path: Path) -> None:
    done = run_script(
        [
            "--collections", "3", "--hourly-collections", "2", "--days", "3",
            "--raw-days", "1", "--keep-days", "2", "--out", str(tmp_path),
        ]
    )  # fmt: skip

    assert done.returncode == 0, f"exited {done.returncode}:\n{done.stdout}\n{done.stderr[-3000:]}"
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in done.stdout.splitlines()
        if line.startswith(("| memory |", "| sqlite |", "| redis |"))
    ]
    assert [(row[0], row[1], row[2]) for row in rows] == [
        (interpreter, feed, collections)
        for interpreter in ("memory", "sqlite", "redis")
        for feed, collections in (("every hour", "2"), ("settled", "3"))
    ]
    for row in rows:
        assert float(row[4].split()[0]) > 24, row  # a day of raw points and the reduced days
        assert float(row[5].replace(",", "")) > 0, row
    assert "every count matches the independent count; the two feeds end in the same points" in done.stdout
    assert "MISMATCH" not in done.stdout
    assert not list(tmp_path.glob("*.db")), "the SQLite files are left in --out"
