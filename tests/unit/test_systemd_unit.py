"""deploy/systemd/influencer-stats.service: a unit systemd takes (``systemd-analyze verify``, where it
is installed) that starts the installed command with settings the service knows and stops it after
its drain."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from influencer_stats.config.resolve import resolve
from influencer_stats.settings import default_of
from tests import manifests

UNIT = manifests.ROOT / "deploy" / "systemd" / "influencer-stats.service"
#: Where the unit's header installs the venv; ExecStart is its console script.
VENV = "/opt/influencer-stats"


def sections() -> dict[str, list[tuple[str, str]]]:
    """Each ``[Section]``'s ``Key=value`` lines in order (a key may repeat, as Environment= does)."""
    found: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    for number, line in enumerate(UNIT.read_text().splitlines(), 1):
        if not line.strip() or line.startswith(("#", ";")):
            continue
        if header := re.fullmatch(r"\[(\w+)\]", line):
            current = found.setdefault(header.group(1), [])
            continue
        key, equals, value = line.partition("=")
        assert current is not None and equals and re.fullmatch(r"[A-Za-z]+", key), f"line {number}: {line}"
        current.append((key, value))
    return found


def values(section: str, key: str) -> list[str]:
    return [value for k, value in sections()[section] if k == key]


def environment() -> dict[str, str]:
    return dict(line.split("=", 1) for line in values("Service", "Environment"))


def test_systemd_verifies_the_unit_without_a_warning(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    assert {"Unit", "Service", "Install"} <= sections().keys()  # what systemd reads, parsed
    if analyze is None:  # no systemd here: the structure above is what is checked
        return
    # The same unit, its command an executable that exists here (verify checks it is one): this Python.
    installed = tmp_path / UNIT.name
    installed.write_text(UNIT.read_text().replace(f"{VENV}/bin/influencer-stats", sys.executable))

    run = subprocess.run([analyze, "verify", str(installed)], capture_output=True, text=True, timeout=60)

    assert (run.returncode, run.stdout + run.stderr) == (0, "")


def test_it_starts_the_package_s_command_from_the_venv_its_header_installs() -> None:
    scripts = tomllib.loads((manifests.ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    (start,) = values("Service", "ExecStart")

    assert start == f"{VENV}/bin/influencer-stats" and Path(start).name in scripts
    assert f"python3 -m venv {VENV}" in UNIT.read_text()


def test_every_variable_it_sets_is_a_setting_and_they_resolve() -> None:
    env = environment()
    python = {v for v in env if v.startswith("PYTHON")}  # the interpreter's own, as the image sets them

    assert env and {v for v in env.keys() - python if not manifests.is_known(v)} == set()
    settings = resolve(env)
    assert settings.profile == "demo"
    # The SQLite file in the state directory, the one place ProtectSystem=strict leaves writable.
    (state,) = values("Service", "StateDirectory")
    assert Path(settings.db_path).parent == Path("/var/lib") / state
    assert values("Service", "ProtectSystem") == ["strict"]


def test_it_stops_with_sigterm_after_the_drain_and_does_not_retry_a_refused_setting() -> None:
    (timeout,) = values("Service", "TimeoutStopSec")
    graceful = environment().get("INFLUENCER_STATS_GRACEFUL_SHUTDOWN", str(default_of("graceful_shutdown_s")))

    assert values("Service", "KillSignal") == ["SIGTERM"]
    assert int(timeout) > float(graceful)
    assert values("Service", "Restart") == ["on-failure"]
    assert values("Service", "RestartPreventExitStatus") == ["2"]  # a refused setting: exit 2
    assert values("Service", "NoNewPrivileges") == ["yes"]
    assert values("Service", "DynamicUser") == ["yes"]
