"""The report's sections by heading: read one, replace or append one, and find the ones people
wrote (those the generated report lacks), so a rerun keeps them."""

from __future__ import annotations

from pathlib import Path


def _section_lines(lines: list[str], heading: str) -> tuple[int, int] | None:
    """Where the section ``heading`` starts and ends (the next ``## `` heading, or the end)."""
    start = next((i for i, line in enumerate(lines) if line.strip() == heading), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return start, end


def extract_section(text: str, heading: str) -> str | None:
    """The section that starts with ``heading`` up to the next ``## `` heading (None if absent)."""
    lines = text.splitlines()
    span = _section_lines(lines, heading)
    return None if span is None else "\n".join(lines[span[0] : span[1]]).rstrip()


def replace_section(text: str, heading: str, section: str) -> str:
    """``text`` with the section ``heading`` replaced by ``section``; appended when it has none."""
    lines = text.splitlines()
    span = _section_lines(lines, heading)
    if span is None:
        return text.rstrip() + "\n\n" + section
    start, end = span
    return "\n".join([*lines[:start], *section.splitlines(), "", *lines[end:]]) + "\n"


def write_section(report: Path, heading: str, section: str) -> None:
    """Replace (or append) one section of the report file, keeping the rest as it is."""
    report.write_text(replace_section(report.read_text() if report.exists() else "", heading, section))


def hand_written(previous: str, generated: str) -> list[str]:
    """The sections of ``previous`` whose heading ``generated`` lacks (written by people), in order."""
    have = {line.strip() for line in generated.splitlines() if line.startswith("## ")}
    lines = previous.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("## ")]
    ends = [*starts[1:], len(lines)][: len(starts)]  # no heading at all: no section
    return [
        "\n".join(lines[a:b]).rstrip()
        for a, b in zip(starts, ends, strict=True)
        if lines[a].strip() not in have
    ]
