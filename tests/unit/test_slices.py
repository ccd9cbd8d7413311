"""The slices: each declares what it is, has one line in the list, and the core never names it.

``make slices`` (``scripts/slices.py check``) removes each one in a scratch copy and runs every
static check and the unit suites there: minutes. These find most mistakes in a second: a slice
whose module does not declare itself, whose files are gone, whose line is not one line, or whose
modules a file outside it still names (the file a removal would break).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import orjson
import pytest

from influencer_stats.bootstrap.slices import INSTALLED, joints, load
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
#: The joints of two installed slices (``slice.Joint``), each once.
JOINTS = list({j.name: j for s in DECLARED for j in s.joints}.values())


def test_every_installed_slice_is_loaded_once_in_the_order_listed() -> None:
    assert [s.name for s in SLICES] == list(INSTALLED) == [s.name for s in load()]
    assert len(set(INSTALLED)) == len(INSTALLED)


def test_each_slice_declares_files_that_exist_and_the_modules_they_hold() -> None:
    # One test over every installed slice (none at all in a skeleton without them).
    for declared in DECLARED:
        files = TOOL.files_of(ROOT, declared)  # fails naming a pattern that matches nothing
        python = {str(p.with_suffix("")).replace("/", ".") for p in files if p.suffix == ".py"}
        for module in declared.modules:
            assert any(m == module or m.startswith(module + ".") for m in python), f"{module} not in {files}"


def test_a_file_slices_share_exists_and_is_none_of_their_own_files() -> None:
    # It goes only with the last slice declaring it (``remove``), so none declares it as its own.
    for declared in DECLARED:
        own = {str(p) for p in TOOL.files_of(ROOT, declared)}
        for pattern in declared.shared:
            shared = sorted(ROOT.glob(pattern))
            assert shared, (declared.name, pattern)
            assert not {str(p.relative_to(ROOT)) for p in shared} & own, (declared.name, pattern)


def test_each_joint_is_loaded_with_both_its_slices_and_declares_files_that_exist() -> None:
    assert [j.name for j in joints()] == [j.name for j in JOINTS] == sorted(j.name for j in JOINTS)
    for joint in JOINTS:
        a, b = joint.name.split("__")
        assert {a, b} <= set(INSTALLED), joint.name
        assert joint in next(s for s in DECLARED if s.name == a).joints
        assert joint in next(s for s in DECLARED if s.name == b).joints
        files = TOOL.files_of(ROOT, joint)  # fails naming a pattern that matches nothing
        python = {str(p.with_suffix("")).replace("/", ".") for p in files if p.suffix == ".py"}
        for module in joint.modules:
            assert any(m == module or m.startswith(module + ".") for m in python), f"{module} not in {files}"


#: Every slice that is one of a joint's two: removing it removes each of its joints. Where no
#: joint is installed (a skeleton), one case checks that no joint's file was left behind.
JOINED = sorted({gone for joint in JOINTS for gone in joint.name.split("__")}) or [""]


@pytest.mark.parametrize("gone", JOINED)
def test_removing_either_slice_of_a_joint_removes_the_joint_and_nothing_left_names_it(
    gone: str, tmp_path: Path
) -> None:
    if not gone:  # no joint loaded: none is declared, and no joint's module is left unloaded
        assert not any(s.joints for s in DECLARED)
        joints = [p for p in (ROOT / TOOL.SLICES).glob("*__*.py") if len(p.stem.split("__")) == 2]
        assert joints == []
        return
    # The opposite of ``shared``: a joint goes with the FIRST of its two slices removed, so the
    # other's files never name a module it no longer has (``still_naming``). One removal of each
    # slice covers all its joints (one case each: a copy takes 15 s or more).
    dest = tmp_path / f"without-{gone}"
    done = _remove(gone, str(dest))
    assert done.returncode == 0, done.stderr

    declared = next(s for s in DECLARED if s.name == gone)
    assert declared.joints and TOOL.still_naming(dest, [declared]) == []
    record = (dest / TOOL.REMOVED).read_text()
    left = {j.name for s in TOOL.installed(dest) for j in s.joints}
    for joint in declared.joints:
        assert [p for p in TOOL.files_of(ROOT, joint) if (dest / p).exists()] == []
        assert joint.name not in left
        assert f"{TOOL.SLICES / joint.name}.py" in record  # the perf record may name its files


def test_each_slice_has_one_line_in_the_list() -> None:
    listing = (ROOT / TOOL.SLICES / "__init__.py").read_text().splitlines()
    for declared in DECLARED:
        lines = [line for line in listing if line.strip().startswith(f'"{declared.name}",')]
        assert len(lines) == 1, (declared.name, lines)


def test_each_slice_has_a_row_in_the_table_of_slices_in_architecture() -> None:
    # ARCHITECTURE.md, "The core and its slices": the one place a reader learns what each adds.
    page = (ROOT / "ARCHITECTURE.md").read_text()
    section = page.partition("\n## The core and its slices\n")[2].partition("\n## ")[0]
    rows = {line.split("|")[1].strip().strip("`") for line in section.splitlines() if line.startswith("| `")}
    assert [s.name for s in DECLARED if s.name not in rows] == [], "add its row: | `name` | what it adds |"


def test_no_file_outside_a_slice_names_its_modules(tmp_path: Path) -> None:
    for declared in DECLARED:  # each removed alone: a file of another slice may not name it either
        copy = tmp_path / declared.name
        TOOL.copy_checkout(copy)
        for path in TOOL.files_of(copy, declared):
            (copy / path).unlink()

        assert TOOL.still_naming(copy, [declared]) == []


def _remove(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "scripts/slices.py", "remove", *args], cwd=ROOT, capture_output=True, text=True
    )


def test_removing_what_is_not_installed_is_refused_naming_what_is(tmp_path: Path) -> None:
    refused = _remove("no_such_slice", str(tmp_path / "copy"))

    assert refused.returncode == 2
    assert f"no slice no_such_slice; installed: {', '.join(s.name for s in DECLARED)}" in refused.stderr
    assert not (tmp_path / "copy").exists()


def test_removing_each_slice_leaves_a_checkout_that_no_longer_installs_it(tmp_path: Path) -> None:
    for declared in DECLARED:
        dest = tmp_path / declared.name
        done = _remove(declared.name, str(dest))
        assert done.stdout == f"{dest}: the checkout without {declared.name}\n", done.stderr

        assert all(not (dest / p).exists() for p in TOOL.files_of(ROOT, declared))
        assert f'"{declared.name}",' not in (dest / TOOL.SLICES / "__init__.py").read_text()
        assert [s.name for s in TOOL.installed(dest)] == [s.name for s in DECLARED if s is not declared]
        for page in ("README.md", "ARCHITECTURE.md"):  # the parts of pages marked as its went too
            assert f"<!-- slice {declared.name}" not in (dest / page).read_text()
        assert f"# slice {declared.name}" not in (dest / "scripts" / "test").read_text()  # and of the script
        assert (dest / TOOL.REMOVED).read_text().startswith(f"{declared.name}: ")


def test_the_skeleton_is_a_new_repository_of_the_core_and_the_slices_kept(tmp_path: Path) -> None:
    kept, dest = DECLARED[:1], tmp_path / "my-service"  # none in a skeleton: it is made again

    done = subprocess.run(
        [
            sys.executable,
            "scripts/slices.py",
            "skeleton",
            str(dest),
            *(a for k in kept for a in ("--keep", k.name)),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert [s.name for s in TOOL.installed(dest)] == [k.name for k in kept]
    gone = [s for s in DECLARED if s not in kept]
    before = (ROOT / TOOL.REMOVED).read_text().splitlines() if (ROOT / TOOL.REMOVED).exists() else []
    earlier = [line.partition(":")[0] for line in before]  # a skeleton's own removals, kept
    noted = [line.partition(":")[0] for line in (dest / TOOL.REMOVED).read_text().splitlines()]
    assert [name for name in noted if "+" not in name] == [
        *(name for name in earlier if "+" not in name),
        *(s.name for s in gone),
    ]
    # A file slices share is noted once the last of them is gone, under their names joined by "+".
    names = {s.name for s in gone} | {part for name in earlier for part in name.split("+")}
    assert all(set(name.split("+")) <= names for name in noted if "+" in name)
    log = subprocess.run(["git", "log", "--format=%s"], cwd=dest, capture_output=True, text=True, check=True)
    assert log.stdout == f"A service from the influencer-stats skeleton, without {len(gone)} slices\n"
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=dest, capture_output=True, text=True, check=True
    )
    assert status.stdout == ""  # everything committed


#: ARCHITECTURE.md, "Add a slice", followed for a store kept in a dict of its own.
_SHELF_INTERPRETER = '''"""A collection store of the shelf_store slice: the dict store, under a name of its own."""

from influencer_stats.interpreters.collections.memory_dict import DictCollectionStore


class ShelfStore(DictCollectionStore):
    """The dict store, as a slice's own interpreter."""
'''
_SHELF_SLICE = '''"""Slice ``shelf_store``: a store of its own (``--store shelf``)."""

from influencer_stats.algebras import CollectionStore
from influencer_stats.bootstrap.slices.slice import Slice
from influencer_stats.bootstrap.stores import STORES
from influencer_stats.bootstrap.wiring import Wiring

SLICE = Slice(
    "shelf_store",
    "a store of its own (--store shelf)",
    files=("influencer_stats/interpreters/shelf_store.py",),
    modules=("influencer_stats.interpreters.shelf_store", "influencer_stats.bootstrap.slices.shelf_store"),
)


@STORES.add("shelf", "in memory, one process (a slice's store)", per_process=("collections", "--store sqlite"))
async def _shelf(_: Wiring) -> CollectionStore:
    from influencer_stats.interpreters.shelf_store import ShelfStore

    return ShelfStore()
'''


def _in(root: Path, *argv: str) -> str:
    done = subprocess.run(
        [sys.executable, *argv],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_slice_added_by_the_checklist_is_installed_listed_documented_and_removable(tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    TOOL.copy_checkout(copy)
    (copy / "influencer_stats/interpreters/shelf_store.py").write_text(_SHELF_INTERPRETER)  # 1. its modules
    (copy / TOOL.SLICES / "shelf_store.py").write_text(_SHELF_SLICE)  # 2. its module: SLICE, its entries
    listing = copy / TOOL.SLICES / "__init__.py"  # 3. its one line
    marker = '    # "name",  # what it adds: this line and the files its module declares are the slice\n'
    listing.write_text(
        listing.read_text().replace(marker, marker + '    "shelf_store",  # a store of its own\n')
    )
    _in(copy, "-m", "influencer_stats.config.docs")

    assert "shelf" in orjson.loads(_in(copy, "main.py", "--list-choices"))["store"]
    assert (
        "`shelf` (in memory, one process (a slice's store))" in (copy / "docs/configuration.md").read_text()
    )
    assert "shelf_store" in [s.name for s in TOOL.installed(copy)]

    without = tmp_path / "without"
    _in(copy, "scripts/slices.py", "remove", "shelf_store", str(without))

    assert not (without / "influencer_stats/interpreters/shelf_store.py").exists()
    assert [s.name for s in TOOL.installed(without)] == [s.name for s in DECLARED]
    assert "shelf" not in (without / "docs/configuration.md").read_text()
    assert (without / "docs/configuration.md").read_text() == (ROOT / "docs/configuration.md").read_text()
