"""CHANGELOG.md: one section per release, newest first, the newest the package's version.

A release is told apart by its number: the package's version (pyproject.toml, what ``--version``,
``/openapi.json`` and ``influencer_stats_build_info`` say) must be a section of its own, and what
has changed since sits under "Unreleased" above it.
"""

from __future__ import annotations

import re
import tomllib
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHANGELOG = (ROOT / "CHANGELOG.md").read_text()
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
_HEADING = re.compile(r"^## (?P<name>\S+)(?: — (?P<date>\d{4}-\d{2}-\d{2}))?$", re.MULTILINE)


def releases() -> list[tuple[tuple[int, ...], str | None]]:
    """Each release heading's version and date, in the file's order (Unreleased left out)."""
    found = []
    for heading in _HEADING.finditer(CHANGELOG):
        if heading["name"] != "Unreleased":
            found.append((tuple(int(part) for part in heading["name"].split(".")), heading["date"]))
    return found


def test_every_second_level_heading_is_unreleased_or_a_version() -> None:
    headings = re.findall(r"^## .*$", CHANGELOG, re.MULTILINE)

    assert len(headings) == len(_HEADING.findall(CHANGELOG)), headings
    assert headings[0] in ("## Unreleased", f"## {VERSION} — {releases()[0][1]}")
    assert headings.count("## Unreleased") <= 1


def test_releases_are_newest_first_and_the_newest_is_the_package_s_version() -> None:
    versions = [version for version, _ in releases()]

    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)
    assert ".".join(map(str, versions[0])) == VERSION


def test_every_release_but_the_first_is_dated_in_order() -> None:
    dates = [date.fromisoformat(day) for _, day in releases()[:-1] if day is not None]

    assert len(dates) == len(releases()) - 1, "a release without its date"
    assert dates == sorted(dates, reverse=True)
