"""The figures the README quotes are the perf record's: a re-run that moves them fails here."""

from __future__ import annotations

import re

from tests.readme_commands import README, ROOT

RESULTS = ROOT / "perf" / "RESULTS.md"
QUOTED = re.compile(r"(\d[\d,]*) → (\d[\d,]*) requests a second")


def recorded_rps() -> dict[str, str]:
    """req/s by profile, as the README would write it (rounded, thousands separated)."""
    lines = RESULTS.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| profile |"))
    table = lines[start : next(i for i in range(start, len(lines)) if not lines[i].startswith("|"))]
    rows = [line.split("|")[1:-1] for line in table]
    header = [cell.strip() for cell in rows[0]]
    column = header.index("req/s")
    return {row[0].strip(): f"{round(float(row[column].replace(',', ''))):,}" for row in rows[2:]}


def test_the_readme_quotes_the_first_and_the_fastest_profile_as_recorded() -> None:
    quoted = QUOTED.search(" ".join(README.read_text().split()))
    assert quoted is not None, "README.md no longer quotes v1 → fast: drop this test with the figure"

    recorded = recorded_rps()

    assert quoted.groups() == (recorded["v1"], recorded["fast"]), (
        "README.md's figures are not perf/RESULTS.md's"
    )
