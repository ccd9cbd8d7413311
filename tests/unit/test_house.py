"""Steps a contributor can forget that no other test would notice: an interpreter module nobody
registers, a server room with no entry (or left out of the contract that keeps rooms apart), a
Protocol outside ``algebras/``, a file setting two builders write.

The import graph is grimp's (import-linter's own), read from the source, nothing run.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import sys
import tomllib
from collections.abc import Callable
from functools import partial
from pathlib import Path

import grimp
import pytest

from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.bootstrap.wiring import SHARED_PATHS
from tests import needs

PACKAGE = Path(__file__).resolve().parents[2] / "influencer_stats"
SERVERS = SLOTS["server"].registry


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("influencer_stats")


def _is_package(module: str) -> bool:
    return (PACKAGE.parent / module.replace(".", "/") / "__init__.py").exists()


def test_every_interpreter_module_is_registered_or_used_by_one_that_is(graph: grimp.ImportGraph) -> None:
    # The composition root's builders import each registered interpreter (lazily, inside the
    # builder: still an import); helpers are imported by those. A module neither reaches is
    # dead code, or a registration forgotten.
    reachable = graph.find_upstream_modules("influencer_stats.bootstrap", as_package=True)
    interpreters = {
        m for m in graph.modules if m.startswith("influencer_stats.interpreters.") and not _is_package(m)
    }

    assert interpreters - reachable == set()


def test_every_server_room_is_registered_and_every_entry_names_a_room() -> None:
    rooms = {
        f"influencer_stats.servers.{path.stem if path.is_file() else path.name}"
        for path in (PACKAGE / "servers").iterdir()
        if (path.suffix == ".py" and path.stem != "__init__") or (path / "__init__.py").exists()
    }

    assert {entry.build for entry in SERVERS} == rooms


def test_every_registered_server_room_holds_its_server_record() -> None:
    # What choosing the server imports (serving.server.Server): a room without it fails at start-up.
    from influencer_stats.serving.server import Server

    records = {entry.name: getattr(importlib.import_module(entry.build), "SERVER", None) for entry in SERVERS}

    assert [name for name, record in records.items() if not isinstance(record, Server)] == []


def test_the_contract_that_keeps_server_rooms_apart_covers_every_room() -> None:
    # By a wildcard, so a slice's server joins or leaves without an edit here.
    pyproject = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())
    [apart] = [c for c in pyproject["tool"]["importlinter"]["contracts"] if c["type"] == "independence"]

    assert apart["modules"] == ["influencer_stats.servers.*"]
    assert all(entry.build.rpartition(".")[0] == "influencer_stats.servers" for entry in SERVERS)


def test_every_protocol_lives_in_algebras() -> None:
    outside = []
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] == "algebras":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            bases = [
                b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")
                for b in getattr(node, "bases", [])
            ]
            if isinstance(node, ast.ClassDef) and "Protocol" in bases:
                outside.append(f"{path.relative_to(PACKAGE)}:{node.name}")

    assert outside == []


def _builders_of(path: str) -> set[Callable[..., object]]:
    builds: set[Callable[..., object]] = set()
    for slot in SLOTS.values():
        for entry in slot.registry:
            if path in entry.paths:
                builds.add(entry.build.func if isinstance(entry.build, partial) else entry.build)
    return builds


def test_each_file_setting_is_written_by_one_builder_or_through_its_shared_resource() -> None:
    # Two builders writing one path setting's file themselves would write it in two formats (a
    # store reusing INFLUENCER_STATS_DB for its own file): the next one chosen cannot read it.
    # A file a shared resource opens (``wiring.SHARED_PATHS``, by the function that opens it: the
    # sqlite slice's database) has one format; each builder keeps its own tables in it, and must
    # reach it through that function.
    paths = {path for slot in SLOTS.values() for entry in slot.registry for path in entry.paths}
    many = {path: builds for path in paths if len(builds := _builders_of(path)) > 1}
    unshared = sorted(path for path in many if path not in SHARED_PATHS)
    direct = sorted(
        f"{build.__module__}.{build.__qualname__} reads settings.{path}"
        for path, builds in many.items()
        if path in SHARED_PATHS
        for build in builds
        if f"settings.{path}" in (source := inspect.getsource(build))
        or f"{SHARED_PATHS[path]}(" not in source
    )

    assert (unshared, direct) == ([], [])


def _literals(node: ast.expr) -> list[str]:
    """The string literals ``node`` is, or lists (``x in ("redis", "sqlite")``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [value for element in node.elts for value in _literals(element)]
    return []


def test_the_composition_root_never_compares_a_choice_by_its_name() -> None:
    # What a choice implies is declared on its entry (``registry.Entry``) and read from there;
    # ``store == "redis"`` would miss the next store that does the same.
    names = {name for slot in SLOTS.values() for name in slot.names()}
    found = []
    for path in sorted((PACKAGE / "bootstrap").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
            elif isinstance(node, ast.MatchValue):
                operands = [node.value]
            else:
                continue
            found += [
                f"{path.relative_to(PACKAGE)}:{node.lineno} {literal!r}"
                for operand in operands
                for literal in _literals(operand)
                if literal in names
            ]

    assert found == []


def test_every_server_an_entry_needs_is_one_the_tests_start() -> None:
    needed = {f"{slot.name}={entry.name}": entry.needs for slot in SLOTS.values() for entry in slot.registry}
    assert {choice: need for choice, need in needed.items() if not set(need) <= set(needs.SERVERS)} == {}


def _classes_asked_of(source: str) -> list[str]:
    """The classes ``isinstance``/``issubclass`` calls in ``source`` name that are neither
    builtins nor of the standard library (``asyncio.Task``, ``OSError``), ``line: name``."""
    tree = ast.parse(source)
    imported: dict[str, str] = {}  # a name bound by an import: the module it came from
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            imported |= {alias.asname or alias.name: node.module for alias in node.names}
        elif isinstance(node, ast.Import):
            imported |= {(alias.asname or alias.name).split(".")[0]: alias.name for alias in node.names}

    def foreign(expr: ast.expr) -> list[str]:
        if isinstance(expr, ast.Tuple):
            return [name for element in expr.elts for name in foreign(element)]
        root = expr
        while isinstance(root, ast.Attribute):
            root = root.value
        name = root.id if isinstance(root, ast.Name) else ast.unparse(root)
        if name in imported:
            stdlib = imported[name].split(".")[0] in sys.stdlib_module_names
        else:
            stdlib = isinstance(root, ast.Name) and root is expr and hasattr(builtins, name)
        return [] if stdlib else [ast.unparse(expr)]

    return [
        f"{node.lineno}: {name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("isinstance", "issubclass")
        and len(node.args) == 2
        for name in foreign(node.args[1])
    ]


def test_the_check_for_classes_asked_of_finds_an_interpreters_class_and_passes_the_stdlibs() -> None:
    source = """
import asyncio
from influencer_stats.interpreters.youtube.youtube_source import YouTubeVideoStatsSource as YT
from influencer_stats.interpreters import videos
if isinstance(inner, YT) or isinstance(task, asyncio.Task) or isinstance(error, (OSError, int)):
    pass
if isinstance(inner, (videos.deadline.DeadlineSource, KeyError)) or issubclass(kind, Local):
    pass
"""
    assert _classes_asked_of(source) == ["5: YT", "7: videos.deadline.DeadlineSource", "7: Local"]


def test_the_composition_root_never_asks_a_source_for_its_class() -> None:
    # What a layer can do is declared on its registry entry (``registry.Entry``) and read from
    # there; ``isinstance(inner, YouTubeVideoStatsSource)`` builds a stack other than the one the
    # entries (and ``--list-profiles``) describe, and misses the next source that could do the same.
    found = [
        f"{path.relative_to(PACKAGE)}:{line}"
        for path in sorted((PACKAGE / "bootstrap").rglob("*.py"))
        for line in _classes_asked_of(path.read_text())
    ]

    assert found == []
