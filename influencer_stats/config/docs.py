"""The README's tables of slots and settings, generated from the registries and declarations.

``python -m influencer_stats.config.docs`` rewrites them in README.md between
their markers; a test fails when README.md and the code disagree.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.config.cli import shown
from influencer_stats.config.settings import declared, default_of

README = Path(__file__).resolve().parents[2] / "README.md"


def choices_table() -> str:
    """One row per slot: its flag and variable, and each choice with its line of doc."""
    rows = ["| slot | flag / env | choices |", "|---|---|---|"]
    for slot in SLOTS.values():
        names = [f"`{entry.name}` ({entry.doc})" for entry in slot.registry]
        if slot.many:
            names.insert(0, "`none`")
        rows.append(f"| {slot.name.replace('_', ' ')} | `{slot.flag}` / `{slot.env}` | {', '.join(names)} |")
    return "\n".join(rows)


def settings_table() -> str:
    """One row per setting: variable (and flag), kind, default, meaning."""
    rows = ["| variable | kind | default | meaning |", "|---|---|---|---|"]
    for name, spec in declared().items():
        variable = f"`{spec.env}`" + (f" / `{spec.flag}`" if spec.flag else "")
        default = shown(default_of(name))
        rows.append(f"| {variable} | {spec.kind} | `{default}` | {spec.doc} |")
    return "\n".join(rows)


TABLES = {"choices": choices_table, "settings": settings_table}


def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"<!-- {name}:begin[^>]*-->\n(.*?)<!-- {name}:end -->", re.DOTALL)


def generated(readme: str) -> str:
    """``readme`` with every marked table replaced by what the code says."""
    for name, table in TABLES.items():
        match = _pattern(name).search(readme)
        if match is not None:
            readme = readme[: match.start(1)] + table() + "\n" + readme[match.end(1) :]
    return readme


def tables_in(readme: str) -> dict[str, str]:
    """The marked tables as they stand in ``readme``."""
    found = {name: _pattern(name).search(readme) for name in TABLES}
    return {name: match.group(1) for name, match in found.items() if match is not None}


if __name__ == "__main__":
    text = README.read_text()
    README.write_text(generated(text))
    sys.stdout.write("README.md tables regenerated\n")
