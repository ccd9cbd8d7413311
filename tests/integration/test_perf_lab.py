"""The perf lab end to end in its short mode: it must produce a well-formed report.

Speeds are not asserted (a shared CI machine measures nothing reliably in a few
seconds); only that every step ran and wrote what it should. wrk and py-spy
are required, not optional: scripts/test runs scripts/perf-up.sh first, and
without them this test fails with the lab's install hint.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from influencer_stats.config.resolve import offered
from tests.support import run_perf_script

TIMEOUT_S = 120.0
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
#: A profile measured besides the default: the first one offered (v1, or one whose choices are all
#: installed when a slice is removed).
MEASURED = next(name for name in offered() if name != "demo")
KEPT = f"{MEASURED} spends its time writing log lines (kept from the previous report)."


def run_lab(args: list[str]) -> subprocess.CompletedProcess[str]:
    return run_perf_script("run.py", args, TIMEOUT_S)


def table_row(report: str, name: str) -> list[str]:
    rows = [line for line in report.splitlines() if line.startswith(f"| {name} |")]
    assert len(rows) == 1, f"expected one row for {name!r} in:\n{report}"
    return [cell.strip() for cell in rows[0].strip("|").split("|")]


def number(cell: str) -> float:
    return float(cell.replace(",", "").rstrip("%×").strip())


def test_short_run_writes_a_well_formed_report(tmp_path: Path) -> None:
    report = tmp_path / "RESULTS.md"
    flames, chart = tmp_path / "flames", tmp_path / "chart.png"
    report.write_text(
        f"# old report\n\n## Reading the flame graphs\n\n- **{MEASURED}**: {KEPT}\n\n## Old tail\n"
    )

    done = run_lab(
        [
            "--profiles", f"{MEASURED},demo", "--short", "--rounds", "2", "--out", str(tmp_path / "out"),
            "--report", str(report), "--flames", str(flames), "--chart", str(chart),
        ]
    )  # fmt: skip

    assert done.returncode == 0, f"perf/run.py exited {done.returncode}:\n{done.stderr[-4000:]}"
    text = report.read_text()
    header = table_row(text, "profile")
    rps_column = header.index("req/s")
    for name in (MEASURED, "demo", "ceiling"):
        row = table_row(text, name)
        assert len(row) == len(header), row
        assert number(row[header.index("requests")]) > 0, row
        assert number(row[rps_column]) > 0, row
        number(row[header.index("p99")].split()[0])
    assert number(table_row(text, "ceiling")[header.index("ceiling %")]) == pytest.approx(100.0)

    for name in (MEASURED, "demo"):
        svg = flames / f"flame-{name}.svg"
        assert svg.stat().st_size > 0, svg
        assert b"<svg" in svg.read_bytes()[:4096], svg
        assert f"flames/flame-{name}.svg" in text
    assert chart.read_bytes()[:8] == PNG_MAGIC
    assert "![" in text
    assert "chart.png" in text

    # The human-written section survives a re-run; new profiles get a placeholder line.
    reading = text.split("## Reading the flame graphs", 1)[1].split("\n## ", 1)[0]
    assert KEPT in reading
    assert "**demo**" in reading
    # So does every other section people wrote: after the generated ones, once.
    assert text.count("## Old tail") == 1 and text.rstrip().endswith("## Old tail")
    assert "--short" in text
    assert "`--rounds 2`" in text
    for name in (MEASURED, "demo", "ceiling"):  # every row says what each round measured
        assert f"**{name}**: req/s by round" in text
    assert "YouTube double: nginx" in text or "YouTube double: the Python double" in text


def test_an_unknown_profile_is_refused_before_anything_starts(tmp_path: Path) -> None:
    done = run_lab(["--profiles", f"{MEASURED},no-such-profile", "--short", "--out", str(tmp_path / "out")])

    assert done.returncode == 2, done.stderr
    assert "no-such-profile" in done.stderr
    assert "PROFILES" in done.stderr
    assert not (tmp_path / "out").exists()
