"""The conventions operators expect of ``main.py`` (and ``influencer-stats``), as processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.declared_paths import redirected_paths
from tests.support import (
    ROOT,
    SERVERS,
    SHARED_STORE_ARGS,
    WORKER_COUNTS,
    every_worker_started,
    free_port,
    running_service,
    stop,
    wait_until_healthy,
)


def _main(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "main.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, **(env or {})},
        check=False,
    )


def _setting(printed: str, name: str) -> list[str]:
    """``--print-settings``' row for ``name``: value, source."""
    return next(line.split()[1:3] for line in printed.splitlines() if line.split()[0] == name)


def test_an_env_file_sets_settings_and_the_environment_wins_over_it(tmp_path: Path) -> None:
    env_file = tmp_path / "service.env"
    env_file.write_text("INFLUENCER_STATS_CACHE_TTL=7\nINFLUENCER_STATS_KEEPALIVE=3\n")

    result = _main("--env-file", str(env_file), "--print-settings", env={"INFLUENCER_STATS_KEEPALIVE": "4"})

    assert result.returncode == 0, result.stderr
    assert _setting(result.stdout, "cache_ttl_s") == ["7.0", "environment"]
    assert _setting(result.stdout, "keepalive_s") == ["4.0", "environment"]


@pytest.mark.parametrize(
    ("content", "reason"),
    [(None, "no such file or directory"), ("INFLUENCER_STATS_PORT 8080\n", "line 1: expected KEY=VALUE")],
)
def test_an_env_file_that_cannot_be_read_exits_2_with_one_line(
    tmp_path: Path, content: str | None, reason: str
) -> None:
    env_file = tmp_path / "service.env"
    if content is not None:
        env_file.write_text(content)

    result = _main("--env-file", str(env_file), "--print-settings")

    assert result.returncode == 2
    assert result.stderr == f"main.py: error: --env-file {env_file}: {reason}\n"
    assert result.stdout == ""


def test_a_misspelled_variable_gets_one_warning_line_and_the_service_goes_on() -> None:
    result = _main("--print-settings", env={"INFLUENCER_STATS_LOG_LEVLE": "info"})

    assert result.returncode == 0
    assert result.stderr == (
        "influencer-stats: warning: INFLUENCER_STATS_LOG_LEVLE is not a setting, ignored; "
        "did you mean INFLUENCER_STATS_LOG_LEVEL?\n"
    )
    assert _setting(result.stdout, "log_level") == ["debug", "default"]


@pytest.mark.parametrize(
    ("action", "code"),
    # 128 + SIGPIPE, as cat or seq end there; argparse's --help ignores a failed write and exits 0.
    [("--print-settings", 141), ("--list-profiles", 141), ("--list-choices", 141), ("--help", 0)],
)
def test_a_closed_stdout_ends_quietly(action: str, code: int) -> None:
    # `main.py --print-settings | head -1`, without the race: the reader is gone before anything is written.
    reader, writer = os.pipe()
    os.close(reader)
    try:
        process = subprocess.Popen(
            [sys.executable, "main.py", action], cwd=ROOT, stdout=writer, stderr=subprocess.PIPE
        )
    finally:
        os.close(writer)
    _, stderr = process.communicate(timeout=30)

    assert stderr == b""  # no BrokenPipeError, no traceback
    assert process.returncode == code


@pytest.mark.parametrize("server", SERVERS)
def test_a_closed_stdout_does_not_fail_a_request_or_the_shutdown(server: str, tmp_path: Path) -> None:
    # `main.py | head -1` once head has gone: every JSON log line meets a closed pipe.
    reader, writer = os.pipe()
    os.close(reader)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    errors = tmp_path / "stderr.log"
    try:
        with errors.open("wb") as stderr:
            process = subprocess.Popen(
                [sys.executable, "main.py", "--server", server, "--port", str(port)],
                cwd=ROOT,
                env={**os.environ, **redirected_paths(tmp_path)},
                stdout=writer,
                stderr=stderr,
            )
    finally:
        os.close(writer)
    try:
        wait_until_healthy(url, process)
        answers = [httpx.put(f"{url}/collections/c{n}", json={"videos": []}).status_code for n in range(5)]
    finally:
        code = stop(process)
    said = errors.read_text()

    assert answers == [201] * 5
    assert code == 0
    assert said.startswith(f"influencer-stats: listening on {url} ") and said.count("\n") == 1, said


@pytest.mark.parametrize("workers", WORKER_COUNTS)
@pytest.mark.parametrize("server", SERVERS)
@pytest.mark.usefixtures("shared_store_server")
def test_sigterm_stops_every_server_with_exit_code_0(server: str, workers: str, tmp_path: Path) -> None:
    args = ["--server", server, *SHARED_STORE_ARGS, "--workers", workers]
    with running_service(args, tmp_path / "stop.log") as service:
        every_worker_started(service.output, int(workers))
        httpx.put(f"{service.url}/collections/last", json={"videos": []})

    # running_service ends it with SIGTERM; uvicorn (starlette, asgi) used to raise it again: 143.
    assert service.process.returncode == 0, service.output()[-2000:]
    assert "Traceback" not in service.output()
    # Each worker shut down gracefully (its lifespan closed the API), none was killed.
    assert service.output().count('"event":"service.stopping"') == int(workers)
