"""The files registered interpreters say they write, pointed into a temporary folder.

Each registry entry names the settings that are paths its builder writes
(``Entry.paths``). Every test that builds interpreters (the contract suites,
the registry test, a running service) redirects all of them at once, so none
writes into the checkout and a new file-backed interpreter needs no test edit;
``tests/integration/test_registry.py`` fails a build that writes a file it did
not declare.
"""

from __future__ import annotations

from pathlib import Path

from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.settings import declared, default_of


def path_settings() -> tuple[str, ...]:
    """Every setting some registered entry of some slot declares as a path it writes."""
    named = (path for slot in SLOTS.values() for entry in slot.registry for path in entry.paths)
    return tuple(dict.fromkeys(named))


def redirected_paths(folder: Path) -> dict[str, str]:
    """Each declared path setting's variable → a file in a folder of its own under ``folder``.

    The folder does not exist yet: a builder creates the folders of the files it writes.
    """
    specs = declared()
    return {
        specs[name].env: str(folder / name / Path(str(default_of(name) or name)).name)
        for name in path_settings()
    }
