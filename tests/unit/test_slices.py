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


# Each test goes over every installed slice, so it holds (and runs) with none installed too.


def test_a_slice_declares_files_that_exist_and_the_modules_they_hold() -> None:
    for declared in DECLARED:
        files = TOOL.files_of(ROOT, declared)  # fails naming a pattern that matches nothing
        python = {str(p.with_suffix("")).replace("/", ".") for p in files if p.suffix == ".py"}
        for module in declared.modules:
            assert any(m == module or m.startswith(module + ".") for m in python), (
                f"{declared.name}: {module} is not among {files}"
            )


def test_a_slice_has_one_line_in_the_list() -> None:
    listing = (ROOT / TOOL.SLICES / "__init__.py").read_text()
    for declared in DECLARED:
        lines = [line for line in listing.splitlines() if line.strip().startswith(f'"{declared.name}",')]
        assert len(lines) == 1, (declared.name, lines)


def test_no_file_outside_a_slice_names_its_modules() -> None:
    for declared in DECLARED:
        own = {f"{path}:" for path in TOOL.files_of(ROOT, declared)}
        outside = [hit for hit in TOOL.still_naming(ROOT, [declared]) if not hit.startswith(tuple(own))]
        assert outside == [], declared.name  # the files a removal would break


def test_a_removed_slice_leaves_a_service_that_does_not_know_its_choices(tmp_path: Path) -> None:
    # A slice made here (a module, a file, a line), so the removal is tested whatever is installed.
    source = tmp_path / "checkout"
    TOOL.copy_checkout(source)
    (source / "probe.txt").write_text("the probe slice's file\n")
    (source / TOOL.SLICES / "probe.py").write_text(
        "from influencer_stats.bootstrap.slices.slice import Slice\n\n"
        'SLICE = Slice("probe", "a slice made by a test", files=("probe.txt",), modules=())\n'
    )
    listing = source / TOOL.SLICES / "__init__.py"
    opening = "INSTALLED: Final[tuple[str, ...]] = (\n"
    listing.write_text(listing.read_text().replace(opening, f'{opening}    "probe",  # a test\'s\n'))
    dest = tmp_path / "without"
    done = subprocess.run(
        [sys.executable, "scripts/slices.py", "remove", "probe", str(dest)],
        cwd=source,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == f"{dest}: the checkout without probe\n"

    assert not (dest / TOOL.SLICES / "probe.py").exists() and not (dest / "probe.txt").exists()
    assert '"probe",' not in (dest / TOOL.SLICES / "__init__.py").read_text()
    assert [s.name for s in TOOL.installed(dest)] == [s.name for s in DECLARED]
