"""perf/history_bytes.py in a short run: every interpreter installed fed, measured and checked, a well-formed table.

Sizes are not asserted beyond being positive (the full run's figures are in perf/RESULTS.md);
only that each step ran, that every history ends with the count the script computes without
the retention, and that both feeds end in the same points. The interpreters are the history
slot's entries (the in-process one first, then each joint's measure by name); with the ``redis``
slice redis-server is required, not optional: scripts/perf-up.sh installs it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from influencer_stats.bootstrap.slots import SLOTS
from tests.support import run_perf_script

TIMEOUT_S = 120.0


def run_script(args: list[str]) -> subprocess.CompletedProcess[str]:
    return run_perf_script("history_bytes.py", args, TIMEOUT_S)


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
        if line.startswith(tuple(f"| {name} |" for name in SLOTS["history"].names()))
    ]
    installed = ["memory", *sorted(name for name in SLOTS["history"].names() if name != "memory")]
    assert [(row[0], row[1], row[2]) for row in rows] == [
        (interpreter, feed, collections)
        for interpreter in installed
        for feed, collections in (("every hour", "2"), ("settled", "3"))
    ]
    for row in rows:
        assert float(row[4].split()[0]) > 24, row  # a day of raw points and the reduced days
        assert float(row[5].replace(",", "")) > 0, row
    assert "every count matches the independent count; the two feeds end in the same points" in done.stdout
    assert "MISMATCH" not in done.stdout
    assert not list(tmp_path.glob("*.db")), "the SQLite files are left in --out"
