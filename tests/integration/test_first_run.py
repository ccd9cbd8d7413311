"""What a first run meets (issue 31): Ctrl-C, a hang-up (a database it cannot open:
``test_sqlite_first_run.py``, the sqlite slice's).

Each as a real process on every server, in one process and with two workers (while a supervisor is
installed: ``WORKER_COUNTS``):
one line naming the setting and its exit code, never a traceback; SIGINT
(Ctrl-C, to the process or the whole process group as a terminal sends it)
and SIGHUP drain as SIGTERM does and exit 0.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
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
    wait_until_healthy,
)

WORKERS = WORKER_COUNTS
#: With two workers, on a store they share (and its server, if it needs one).
pytestmark = pytest.mark.usefixtures("shared_store_server")


def _start(argv: list[str], tmp_path: Path, settings: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``argv`` on a free port, its files under ``tmp_path``, with ``settings``: how it ended."""
    return subprocess.run(
        [*argv, "--port", str(free_port())],
        cwd=ROOT,
        env={**os.environ, **redirected_paths(tmp_path / "files"), **settings},
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


@contextmanager
def _own_process_group(
    server: str, workers: str, tmp_path: Path
) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """The service in a process group of its own (as a shell's job is), serving; its output's file."""
    port = free_port()
    log = tmp_path / "service.log"
    argv = [sys.executable, "main.py", "--server", server, *SHARED_STORE_ARGS, "--workers", workers]
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*argv, "--port", str(port)],
            cwd=ROOT,
            # 30 s to drain, not 10: on a starved machine Granian once killed a worker still draining.
            env={
                **os.environ,
                **redirected_paths(tmp_path / "files"),
                "INFLUENCER_STATS_GRACEFUL_SHUTDOWN": "30",
            },
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_until_healthy(f"http://127.0.0.1:{port}", process, timeout=60)
        every_worker_started(lambda: log.read_text(errors="replace"), int(workers))
        assert httpx.put(f"http://127.0.0.1:{port}/collections/kept", json={"videos": []}).status_code == 201
        # Fifty answers on new connections, which the workers accept in turn: each worker is in its
        # serving loop by now. A Granian worker signalled 0.14 s after its start-up event never
        # stopped, and was killed 30 s later (a fresh clone's run, 2026-12-05).
        for _ in range(50):
            assert httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200
        yield process, log
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


@pytest.mark.parametrize(
    ("sent", "to_the_group"),
    [
        (signal.SIGHUP, False),  # the hang-up: exited at once with 129, nothing drained
        (signal.SIGINT, True),  # Ctrl-C as a terminal sends it: every process of the group
    ],
    ids=["sighup", "sigint-to-the-group"],
)
@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("server", SERVERS)
def test_sighup_and_ctrl_c_drain_every_server_as_sigterm_does_and_exit_0(
    server: str, workers: str, sent: signal.Signals, to_the_group: bool, tmp_path: Path
) -> None:
    with _own_process_group(server, workers, tmp_path) as (process, log):
        if to_the_group:
            os.killpg(process.pid, sent)
        else:
            process.send_signal(sent)
        code = process.wait(60)
    output = log.read_text(errors="replace")

    assert code == 0, output[-3000:]
    assert "Traceback" not in output
    # Each worker shut down gracefully (its lifespan closed the API), none was killed.
    assert output.count('"event":"service.stopping"') == int(workers), output[-3000:]


def _read_until(fd: int, wanted: bytes, timeout_s: float) -> bytes:
    """What the terminal shows until ``wanted`` appears (or the time is up, or the program ends)."""
    seen = b""
    deadline = time.monotonic() + timeout_s
    while wanted not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: the program has ended and closed the terminal
                break
            if not chunk:
                break
            seen += chunk
    return seen


def test_ctrl_c_in_a_terminal_ends_the_default_server_cleanly_with_0(tmp_path: Path) -> None:
    # `make run` then Ctrl-C: uvicorn raised the SIGINT again once it had drained, and the
    # single process (the default: starlette, one worker) ended in a KeyboardInterrupt traceback, 130.
    port = free_port()
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "main.py", "--port", str(port)],
            cwd=ROOT,
            env={**os.environ, **redirected_paths(tmp_path / "files")},
            stdin=terminal,
            stdout=terminal,
            stderr=terminal,
            start_new_session=True,
            preexec_fn=lambda: __import__("fcntl").ioctl(0, __import__("termios").TIOCSCTTY, 0),
        )
        os.close(terminal)
        shown = _read_until(controller, b"listening on", 60)
        wait_until_healthy(f"http://127.0.0.1:{port}", process, timeout=60)
        os.write(controller, b"\x03")  # Ctrl-C: the terminal sends SIGINT to its foreground group
        code = process.wait(60)
        shown += _read_until(controller, b"\0", 2)
    finally:
        os.close(controller)
    text = shown.decode(errors="replace")

    assert code == 0, text[-3000:]
    assert "Traceback" not in text and "KeyboardInterrupt" not in text
    assert text.count('"event":"service.stopping"') == 1, text[-3000:]
