"""The slices: each declares what it is, has one line in the list, and the core never names it.

``make slices`` (``scripts/slices.py check``) removes each one in a scratch copy and runs every
static check and the unit suites there: minutes. These find most mistakes in a second: a slice
whose module does not declare itself, whose files are gone, whose line is not one line, or whose
modules a file outside it still names (the file a removal would break).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from influencer_stats.bootstrap.slices import INSTALLED, load
from influencer_stats.bootstrap.slots import SLICES

ROOT = Path(__file__).resolve().parents[2]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("slices_tool", ROOT / "scripts" / "slices.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


TOOL = _tool()
DECLARED = TOOL.installed(ROOT)


def test_every_installed_slice_is_loaded_once_in_the_order_listed() -> None:
    assert [s.name for s in SLICES] == list(INSTALLED) == [s.name for s in load()]
    assert len(set(INSTALLED)) == len(INSTALLED)


# Each test goes over every installed slice, not one test per slice: ``make slices`` runs them on
# a copy with every slice removed too, where a parametrization over none would be skipped.


def test_every_slice_declares_files_that_exist_and_the_modules_they_hold() -> None:
    for declared in DECLARED:
        files = TOOL.files_of(ROOT, declared)  # fails naming a pattern that matches nothing
        python = {str(p.with_suffix("")).replace("/", ".") for p in files if p.suffix == ".py"}
        for module in declared.modules:
            assert any(m == module or m.startswith(module + ".") for m in python), (
                f"{declared.name}: {module} is not among {files}"
            )


def test_every_slice_has_one_line_in_the_list() -> None:
    listing = (ROOT / TOOL.SLICES / "__init__.py").read_text()
    for declared in DECLARED:
        lines = [line for line in listing.splitlines() if line.strip().startswith(f'"{declared.name}",')]
        assert len(lines) == 1, (declared.name, lines)


def test_no_file_outside_a_slice_names_its_modules(tmp_path: Path) -> None:
    for declared in DECLARED:  # each removed alone: a file of another slice may not name it either
        copy = tmp_path / declared.name
        TOOL.copy_checkout(copy)
        for path in TOOL.files_of(copy, declared):
            (copy / path).unlink()

        assert TOOL.still_naming(copy, [declared]) == []


def test_a_removed_slice_leaves_a_service_that_does_not_know_its_choices(tmp_path: Path) -> None:
    if not DECLARED:  # every slice removed already (``make slices``' last copy): the tool lists none
        listed = subprocess.run(
            [sys.executable, "scripts/slices.py", "list"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        assert (listed.stdout, INSTALLED) == ("", ())
        return
    [first, *_] = DECLARED
    dest = tmp_path / "without"
    done = subprocess.run(
        [sys.executable, "scripts/slices.py", "remove", first.name, str(dest)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == f"{dest}: the checkout without {first.name}\n"

    assert not (dest / TOOL.SLICES / f"{first.name}.py").exists()
    assert all(not (dest / p).exists() for p in TOOL.files_of(ROOT, first))
    left = (dest / TOOL.SLICES / "__init__.py").read_text()
    assert f'"{first.name}",' not in left
    kept = [s.name for s in TOOL.installed(dest)]
    assert kept == [s.name for s in DECLARED if s is not first]
