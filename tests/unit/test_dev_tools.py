"""A contributor's quick tools: ``make unit`` and ``.pre-commit-config.yaml``.

``make unit`` runs the unit and contract suites and nothing else (read from ``make -n``, since
running it here would run this suite inside itself). pre-commit itself is not a dependency;
what it would run is: each hook's entry, with the venv this test runs in standing for ``.venv``.
"""

from __future__ import annotations

import importlib
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIG: dict[str, Any] = importlib.import_module("yaml").safe_load(
    (ROOT / ".pre-commit-config.yaml").read_text()
)
HOOKS: dict[str, dict[str, Any]] = {hook["id"]: hook for repo in CONFIG["repos"] for hook in repo["hooks"]}
#: What pre-commit hands a hook that takes file names: a file that passes every check.
A_CLEAN_FILE = "influencer_stats/version.py"


def test_make_unit_runs_the_unit_and_contract_suites_and_nothing_that_needs_redis_or_the_system() -> None:
    venv = Path(sys.executable).parent.parent
    # -o: the venv counts as installed (installing it is the only other thing the target may do).
    # Run by `make unit` itself, this make must not inherit that one's flags and variables.
    environ = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    planned = subprocess.run(
        ["make", "-n", "-o", f"{venv}/.dev-installed", "unit", f"VENV={venv}", "ARGS="],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )

    assert [shlex.split(line) for line in planned.stdout.splitlines()] == [
        [f"{venv}/bin/python", "-m", "pytest", "-q", "tests/unit"],
        [f"{venv}/bin/python", "-m", "pytest", "-q", "tests/contract", "-k", "not redis"],
    ]


def test_every_hook_is_local_and_runs_a_tool_of_the_venv() -> None:
    assert [repo["repo"] for repo in CONFIG["repos"]] == ["local"]  # nothing fetched
    assert {hook["language"] for hook in HOOKS.values()} == {"system"}
    assert all(hook["entry"].startswith(".venv/bin/") for hook in HOOKS.values())
    assert list(HOOKS) == ["ruff-check", "ruff-format", "mypy", "lint-imports"]
    # mypy and lint-imports check the whole project (as scripts/test runs them): they exist here.
    assert all(Path(_command(hook)[0]).is_file() for hook in HOOKS)


@pytest.mark.parametrize("hook", [h for h in HOOKS if HOOKS[h].get("pass_filenames", True)])
def test_each_file_hook_passes_a_clean_file(hook: str) -> None:
    command = [*_command(hook), A_CLEAN_FILE]
    if hook == "ruff-format":
        command.append("--check")  # the hook rewrites; the test only asks whether it would

    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)

    assert result.returncode == 0, result.stdout + result.stderr


def test_the_ruff_hook_fails_a_file_with_a_lint_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n")  # F401: imported but unused

    result = subprocess.run(
        [*_command("ruff-check"), str(bad)], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )

    assert result.returncode == 1 and "F401" in result.stdout


def _command(hook: str) -> list[str]:
    """The hook's entry, its ``.venv/bin/`` the directory of this test's interpreter."""
    program, *args = shlex.split(HOOKS[hook]["entry"])
    return [str(Path(sys.executable).parent / program.removeprefix(".venv/bin/")), *args]
