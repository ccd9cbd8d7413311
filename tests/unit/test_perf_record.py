"""The committed perf record matches the code: it names no source file that is gone, and the lab
says how to run every workload it has.

The record is perf/RESULTS.md, the reports under perf/results/ and every flame graph beside them:
a flame graph names the files of the frames it sampled, so a record made before a file moved
keeps pointing at code nobody can open (``python perf/run.py --publish`` makes a new one).
"""

from __future__ import annotations

import re
from fnmatch import fnmatch
from pathlib import Path

import pytest

from perf.options import parse_args
from perf.report_sections import hand_written
from tests.support import ROOT

#: A path to one of our source files, as reports write it and py-spy names a frame's file.
OURS = re.compile(rb"(?<![\w/.-])((?:influencer_stats|perf)/[\w/.-]+\.py|main\.py)")
RECORD = [
    ROOT / "perf" / "RESULTS.md",
    *sorted((ROOT / "perf" / "results").glob("*.md")),
    *sorted((ROOT / "perf").rglob("*.svg")),
]


#: What ``scripts/slices.py remove`` noted of each slice it removed: the files it declared.
REMOVED = ROOT / "influencer_stats" / "bootstrap" / "slices" / "removed.txt"


def removed_patterns() -> list[str]:
    if not REMOVED.is_file():
        return []
    return [p for line in REMOVED.read_text().splitlines() for p in line.partition(":")[2].split()]


def removed(name: str) -> bool:
    """Whether ``name`` was a removed slice's file (its records may still name it)."""
    return any(fnmatch(name, p) or name.startswith(f"{p}/") for p in removed_patterns())


def named_sources(path: Path) -> set[str]:
    return {match.decode() for match in OURS.findall(path.read_bytes())}


def test_the_record_is_there_and_names_our_sources() -> None:
    flames = [path for path in RECORD if path.suffix == ".svg"]

    assert flames and all(named_sources(path) for path in flames)


@pytest.mark.parametrize("path", RECORD, ids=[str(p.relative_to(ROOT)) for p in RECORD])
def test_every_source_file_the_record_names_exists(path: Path) -> None:
    gone = sorted(name for name in named_sources(path) if not (ROOT / name).is_file() and not removed(name))

    assert gone == [], "a record older than the code: rerun the lab (python perf/run.py --publish …)"


def test_a_flame_graph_naming_a_moved_file_is_caught(tmp_path: Path) -> None:
    svg = tmp_path / "flame.svg"
    svg.write_bytes(b"<title>serve (influencer_stats/interpreters/http/api.py:120) (3 samples)</title>")

    assert named_sources(svg) == {"influencer_stats/interpreters/http/api.py"}
    assert not (ROOT / "influencer_stats/interpreters/http/api.py").exists()


def test_the_lab_s_help_names_every_workload(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_args(["--help"])

    assert "--workload overlap" in capsys.readouterr().out


def test_a_rewritten_report_keeps_every_section_written_by_people() -> None:
    previous = "# Old\n\n## Results\n\nold rows\n\n## Quota economy\n\nby hand\n\n## Workers\n\nalso\n"
    generated = "# New\n\n## Results\n\nnew rows\n"

    assert hand_written(previous, generated) == ["## Quota economy\n\nby hand", "## Workers\n\nalso"]
