"""The overlap lab end to end, briefly: the youtube profile against the Python double, over loopback.

The video cache slice's: the lab measures what the per-video cache and batching save.
"""

from __future__ import annotations

import re
from pathlib import Path

from perf import overlap, overlap_world


def test_a_short_overlap_run_counts_units_slice_by_slice_and_the_calls_each_wrapper_saved(
    tmp_path: Path,
) -> None:
    code = overlap.main(
        ["--variants", "4,4", "--duration", "3", "--rate", "40", "--slice-s", "1", "--out", str(tmp_path)]
    )

    assert code == 0
    report = (tmp_path / "overlap.md").read_text()
    assert "--variants 4,4 --slice-s 1" in report
    rows = [line for line in report.splitlines() if line.startswith("| **+ both (the youtube profile)**")]
    assert len(rows) == 2  # a variant may run twice (alternating runs)
    units = [int(row.split("|")[2].strip().replace(",", "")) for row in rows]
    assert all(u > 0 for u in units)
    slices = [line for line in report.splitlines() if line.startswith("- + both (the youtube profile): ")]
    assert len(slices) == 2
    for line, total in zip(slices, units, strict=True):
        per_slice, _, saved = line.partition(": ")[2].partition(" (saved: ")
        parts = [int(p.replace(",", "")) for p in per_slice.split(" / ")]
        assert len(parts) >= 3 and sum(parts) == total  # every unit lands in one slice
        assert re.fullmatch(r"(batching|video_cache) [\d,]+(, video_cache [\d,]+)?\)|none\)", saved)


def test_a_closed_loop_on_a_small_world_reports_the_floor_and_the_ids_a_call_carried(tmp_path: Path) -> None:
    code = overlap.main(
        [
            *("--pool", "300", "--collections", "20", "--sizes", "5-60"),
            *("--clients", "4", "--requests", "200", "--variants", "4", "--out", str(tmp_path)),
        ]
    )

    assert code == 0
    report = (tmp_path / "overlap.md").read_text()
    load = overlap_world.world(1, 200, overlap_world.Shape(300, 20, (5, 60)))
    assert f"Floor: {load.floor():.2f} units per 1,000 requests" in report
    assert "--clients 4 --requests 200" in report
    row = next(line for line in report.splitlines() if line.startswith("| **+ both"))
    cells = [cell.strip() for cell in row.split("|")[1:-1]]
    units, per_1000, times_floor, per_call = cells[1:5]
    assert float(per_1000) == round(1000 * int(units) / 200, 1)
    assert float(times_floor.rstrip("×")) >= 1.0  # nothing spends below the floor
    assert 1.0 <= float(per_call) <= 50.0
    assert cells[-1] == "200: 200"
