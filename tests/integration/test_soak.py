"""The soak's short version: invariants under load, faults and writes (never a speed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from perf.profiles import budgeted, stand_ins
from perf.soak_refreshes import refreshes_installed
from tests.support import ROOT


def test_the_short_soak_holds_every_invariant(tmp_path: Path) -> None:
    report = tmp_path / "RESULTS.md"
    report.write_text(
        "# Perf lab results\n\n## Soak under faults\n\nold numbers\n\n## Later section\n\nkept\n"
    )

    result = subprocess.run(
        [sys.executable, "perf/soak.py", "--short", "--report", str(report)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    text = report.read_text()
    assert "| verdict | all invariants held |" in text
    assert "old numbers" not in text
    assert "## Later section\n\nkept" in text
    assert "| socket errors (connect/read/write/timeout) | 0/0/0/0 |" in text
    assert "500:" not in text.split("| by status |")[1].splitlines()[0]
    # The quota phases: only quota-exhausted answers while the budget is spent (with a ledger
    # installed), and what a slow YouTube's timed-out asks cost is exactly the work (3 x 100 calls).
    spent = "| asked-for ids: answers | 503 quota-exhausted:"
    assert (spent if budgeted("youtube") else "| asked-for ids | not run: ") in text
    # That phase is the youtube profile's video cache's: on stand-ins (a slice removed) it says so.
    whole = "| timed-out calls: quota units spent / units of work | 300 / 300 |"
    assert (whole if not stand_ins("youtube") else "| timed-out calls | not run: ") in text
    # Refresh storms beside PUTs of ids and DELETEs (the sources slice's route, when installed):
    # nothing acknowledged lost, no orphaned source.
    assert ("source keys without a collection | 0 / 0, 0 |" in text) == refreshes_installed()
