"""Every relative link of the README and the docs pages leads to a file, and to a heading it names."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from tests.readme_commands import README, ROOT

PAGES = [README, ROOT / "CONTRIBUTING.md", ROOT / "SECURITY.md", *sorted((ROOT / "docs").glob("*.md"))]

_FENCED = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} +(.+?) *#*$", re.MULTILINE)


def prose(page: Path) -> str:
    """The page without its fenced blocks (a `# comment` in a shell block is no heading)."""
    return _FENCED.sub("", page.read_text())


def anchors(page: Path) -> set[str]:
    """The ids GitHub gives the page's headings: lower case, punctuation dropped, spaces as
    hyphens, a repeated one suffixed -1, -2…"""
    seen: Counter[str] = Counter()
    found = set()
    for heading in _HEADING.findall(prose(page)):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        found.add(slug if not seen[slug] else f"{slug}-{seen[slug]}")
        seen[slug] += 1
    return found


def relative_links(page: Path) -> list[str]:
    return [link for link in _LINK.findall(prose(page)) if not re.match(r"^[a-z]+:", link)]


def test_the_pages_are_all_there_and_link_somewhere() -> None:
    assert {page.name for page in PAGES} >= {"README.md", "api.md", "configuration.md", "deployment.md"}
    assert all(relative_links(page) for page in PAGES)


def test_headings_get_the_anchors_github_gives_them() -> None:
    architecture = anchors(ROOT / "ARCHITECTURE.md")

    assert "add-an-interpreter-eg-a-jsonl-store-with-its-own-file" in architecture
    assert "what-a-registry-entry-declares" in architecture


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(page: Path) -> None:
    for link in relative_links(page):
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page

        assert target.exists(), f"{page.name}: {link} leads nowhere"
        assert target.is_relative_to(ROOT), f"{page.name}: {link} leaves the repository"
        if anchor:
            assert target.suffix == ".md", f"{page.name}: {link}: an anchor into a file that is not a page"
            assert anchor in anchors(target), f"{page.name}: {link}: {target.name} has no such heading"
