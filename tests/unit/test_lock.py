"""The lock files agree with pyproject.toml: `make lock` was run after its last change."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent.parent
PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^\s;\\]+)")


def pins(name: str) -> dict[str, str]:
    """Package → pinned version of ``requirements/<name>.txt``; every pin carries a hash."""
    text = (ROOT / "requirements" / name).read_text()
    found: dict[str, str] = {}
    for block in re.split(r"\n(?=\S)", text):
        match = PIN.match(block)
        if match is None:
            continue
        assert "--hash=sha256:" in block, f"{match.group(1)} in {name} has no hash"
        found[canonicalize_name(match.group(1))] = match.group(2)
    return found


def declared(extra: str | None) -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    listed = project["dependencies"] if extra is None else project["optional-dependencies"][extra]
    return [Requirement(line) for line in listed]


@pytest.mark.parametrize(
    ("lock", "extra"),
    [
        ("run.txt", None),
        ("dev.txt", None),
        ("dev.txt", "dev"),
        ("dev.txt", "otel"),
        ("otel.txt", None),
        ("otel.txt", "otel"),
    ],
)
def test_every_declared_dependency_is_pinned_within_its_bounds(lock: str, extra: str | None) -> None:
    locked = pins(lock)
    for requirement in declared(extra):
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{requirement.name} is not in requirements/{lock}: run `make lock`"
        assert requirement.specifier.contains(locked[name], prereleases=True), (
            f"requirements/{lock} pins {name}=={locked[name]}, outside {requirement}: run `make lock`"
        )


def test_running_installs_nothing_only_tests_need_and_the_same_versions_as_testing() -> None:
    run, dev = pins("run.txt"), pins("dev.txt")

    assert {"mypy", "pytest", "matplotlib", "schemathesis"}.isdisjoint(run)
    assert {name: dev.get(name) for name in run} == run


def test_the_optional_tracing_extra_is_tested_but_not_installed_for_running() -> None:
    # `make run` and the image install run.txt unless EXTRAS=otel: tracing=otel there says how to.
    run, dev = pins("run.txt"), pins("dev.txt")
    otel = {canonicalize_name(requirement.name) for requirement in declared("otel")}

    assert otel <= dev.keys()
    assert otel.isdisjoint(run)


def test_the_otel_lock_is_the_running_set_and_the_otel_extra_at_the_versions_tested() -> None:
    # `make run EXTRAS=otel` and `docker build --build-arg EXTRAS=otel` install otel.txt.
    run, otel, dev = pins("run.txt"), pins("otel.txt"), pins("dev.txt")
    extra = {canonicalize_name(requirement.name) for requirement in declared("otel")}

    assert run.items() <= otel.items()
    assert extra <= otel.keys()
    assert {name: dev.get(name) for name in otel} == otel
    assert {"mypy", "pytest", "matplotlib", "schemathesis"}.isdisjoint(otel)
