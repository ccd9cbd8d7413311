"""``uvicorn influencer_stats.asgi:app`` as an installed user runs it: from any folder, like ``influencer-stats``.

Each test runs real uvicorn processes on loopback, bounded in time.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.config.resolve import resolve
from influencer_stats.servers import server as server_named
from influencer_stats.serving.address import announce
from influencer_stats.settings import default_of
from tests.support import SERVERS, free_port, stop, wait_until_healthy

UVICORN = [sys.executable, "-m", "uvicorn"]
#: The registered servers whose app is ASGI (``Server.asgi``).
ASGI = [name for name in SERVERS if server_named(name).asgi]
#: What both refusal cases print: the settings ask for two workers, and the dict store keeps state per process.
REFUSED = {"INFLUENCER_STATS_WORKERS": "2", "INFLUENCER_STATS_STORE": "dict"}
REFUSAL = (
    "influencer_stats.asgi: error: store 'dict' keeps collections in each process: "
    f"with --workers 2 use {SLOTS['store'].instead('dict')}\n"  # the installed stores workers share
)


def _uvicorn(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int | None, str]:
    """Run uvicorn until it exits by itself (at most 30 s; then stopped, and None): its code and output."""
    log = cwd / "uvicorn.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*UVICORN, *args, "--port", str(free_port())],
            cwd=cwd,
            env={**os.environ, **env},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        code: int | None = process.wait(30)
    except subprocess.TimeoutExpired:
        stop(process)
        code = None
    return code, log.read_text(errors="replace")


@pytest.mark.parametrize(
    "target", [["influencer_stats.asgi:app"], ["--factory", "influencer_stats.asgi:create_app"]]
)
def test_uvicorn_serves_the_installed_app_from_any_folder_says_where_and_stops_with_0_as_influencer_stats(
    target: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Run from an empty folder (no main.py): the app comes from the installed package, its files go here.
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "uvicorn.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*UVICORN, *target, "--log-level", "warning", "--port", str(port)],
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_healthy(url, process)
        put = httpx.put(f"{url}/collections/a", json={"videos": ["-4lB5EKS5Uk"]})
        stats = httpx.get(f"{url}/collections/a/stats")
    finally:
        stop(process)

    assert put.status_code == 201 and stats.json()["videos"] == 1
    assert process.returncode == 0  # stopped by SIGTERM, gracefully (uvicorn alone ends with 143)
    assert '"event":"service.stopping"' in log.read_text()
    said = [line for line in log.read_text().splitlines() if not line.startswith("{")]
    announce(replace(resolve({}), port=port))  # the line influencer-stats prints for these settings
    assert said == capsys.readouterr().err.splitlines()
    store = SLOTS["store"].registry[str(SLOTS["store"].default_choice())]  # SQLite with its slice
    assert all((tmp_path / str(default_of(path))).exists() for path in store.paths)


def test_the_app_is_importable_outside_the_checkout(tmp_path: Path) -> None:
    found = subprocess.run(
        [sys.executable, "-c", "import influencer_stats.asgi as m; print(callable(m.create_app))"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )

    assert found.stdout == "True\n", found.stderr


def test_a_refused_setting_ends_uvicorn_with_one_line(tmp_path: Path) -> None:
    # Under uvicorn's --workers and --reload: test_workers_uvicorn.py (the workers slice's).
    code, output = _uvicorn(["influencer_stats.asgi:app", "--log-level", "warning"], tmp_path, REFUSED)

    assert code == 2, output[-2000:]
    assert output == REFUSAL


@pytest.mark.parametrize("server", SERVERS)
def test_uvicorn_serves_each_asgi_server_and_refuses_another_naming_the_ones_that_are(
    server: str, tmp_path: Path
) -> None:
    # Every registered server, as it declares itself (``Server.asgi``): the core's is ASGI.
    env = {"INFLUENCER_STATS_SERVER": server}
    if server_named(server).asgi:
        assert (
            _uvicorn_serves(["influencer_stats.asgi:app"], tmp_path, env) == 0
        )  # answered, stopped gracefully
    else:
        code, output = _uvicorn(["influencer_stats.asgi:app"], tmp_path, env)
        assert code == 2
        assert ASGI[0] == "starlette"  # the core's, first
        assert output == (
            f"influencer_stats.asgi: error: server {server!r} is not an ASGI application; "
            f"set INFLUENCER_STATS_SERVER to {' or '.join(ASGI)}, or run influencer-stats\n"
        )


def _uvicorn_serves(args: list[str], cwd: Path, env: dict[str, str]) -> int | None:
    """Run uvicorn until it answers /healthz, then stop it: its exit code (0: a graceful stop)."""
    port = free_port()
    with (cwd / "uvicorn.log").open("wb") as out:
        process = subprocess.Popen(
            [*UVICORN, *args, "--log-level", "warning", "--port", str(port)],
            cwd=cwd,
            env={**os.environ, **env},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_healthy(f"http://127.0.0.1:{port}", process)
    finally:
        stop(process)
    return process.returncode
