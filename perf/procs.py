"""Processes the lab starts: their command names, ports, start and stop by PID, readiness, memory.

Every child stays in the lab's process group (no new session), so whoever
stops the lab's group stops its servers too; the lab itself stops each child
by its PID: SIGTERM, a bounded wait, then SIGKILL.
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
"""The repository: every process the lab starts runs in it (see :func:`start`)."""
HOST: Final = "127.0.0.1"


def portable(executable: str | Path) -> str:
    """``executable`` as a command that names no machine-specific folder.

    Command lines end up in reports and flame-graph titles (py-spy records its own
    command line and those of the processes it samples), so: relative to the
    repository when the file lies inside it (``.venv/bin/python``; :func:`start` runs
    everything in :data:`ROOT`), its bare name when PATH finds this very file, else
    unchanged.
    """
    path = Path(executable)
    if not path.is_absolute():
        return str(executable)
    try:
        inside = path.relative_to(ROOT).as_posix()
    except ValueError:
        return path.name if shutil.which(path.name) == str(path) else str(path)
    return inside if "/" in inside else f"./{inside}"  # never a bare name: PATH would look it up


PYTHON: Final = portable(sys.executable)
"""This interpreter (a venv's python even when the venv is not activated), as :func:`portable` names it."""


SERVER_CPU: Final = 0
"""With ``--pin``: the CPU every process of the server under test runs on (workers inherit it)."""
LOAD_CPU: Final = 1
"""With ``--pin``: the CPU of everything else (the lab, wrk, the YouTube double, redis-server, py-spy)."""


def pinned(argv: Sequence[str], cpu: int | None) -> list[str]:
    """``argv`` run on ``cpu`` alone (``taskset``, which execs it: the PID is the program's), or as it is."""
    return list(argv) if cpu is None else ["taskset", "--cpu-list", str(cpu), *argv]


def pin_to_load_cpu() -> str | None:
    """Move this process (and so every child it starts from now on) to :data:`LOAD_CPU`; why not, or None."""
    wanted = {SERVER_CPU, LOAD_CPU}
    allowed = os.sched_getaffinity(0)
    if not wanted <= allowed:
        return f"--pin needs CPUs {sorted(wanted)}; this process may run on {sorted(allowed)}"
    if shutil.which("taskset") is None:
        return "--pin needs taskset (util-linux)"
    os.sched_setaffinity(0, {LOAD_CPU})
    return None


class LabError(Exception):
    """An expected failure of a lab step, reported with its message."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


def start(
    argv: Sequence[str],
    log_path: Path,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path = ROOT,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` with stdout and stderr appended to ``log_path`` (never a pipe left undrained).

    ``env`` is the child's whole environment (None: this process's).
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        return subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=None if env is None else dict(env),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )


@contextmanager
def running(
    argv: Sequence[str],
    log_path: Path,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path = ROOT,
) -> Iterator[subprocess.Popen[bytes]]:
    """:func:`start` ``argv``, and :func:`stop` it when the block ends, however it ends."""
    process = start(argv, log_path, env=env, cwd=cwd)
    try:
        yield process
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes], timeout_s: float = 10.0) -> int | None:
    """SIGTERM, wait at most ``timeout_s``, then SIGKILL; the exit code (None if it never ended)."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            try:
                process.wait(5.0)
            except subprocess.TimeoutExpired:
                return None
    return process.returncode


def http_get(port: int, path: str, timeout_s: float = 5.0) -> tuple[int, bytes]:
    """One GET on a fresh connection: status and body."""
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout_s)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def wait_until_ok(
    port: int, path: str, process: subprocess.Popen[bytes], log_path: Path, timeout_s: float = 30.0
) -> float:
    """Poll ``GET path`` until it answers 200 (bounded); the seconds it took."""
    started = time.monotonic()
    deadline = started + timeout_s
    while True:
        if process.poll() is not None:
            raise LabError(f"exited with {process.returncode} before answering; log: {_tail(log_path)}")
        try:
            status, _ = http_get(port, path, timeout_s=1.0)
            if status == 200:
                return time.monotonic() - started
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise LabError(f"no 200 from {path} on port {port} within {timeout_s:g}s; log: {_tail(log_path)}")
        time.sleep(0.05)


def _tail(path: Path, limit: int = 600) -> str:
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - limit))
            return f.read().decode(errors="replace").strip() or "(empty)"
    except OSError:
        return "(no log)"


@dataclass(frozen=True, slots=True)
class Memory:
    """Resident memory of a process and its descendants, in MiB."""

    rss_mb: float
    """VmRSS now."""
    peak_mb: float
    """VmHWM: the high-water mark of each process, summed."""
    processes: int


def _children_by_parent() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may contain spaces and parentheses.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1:
            tree.setdefault(int(fields[1]), []).append(int(entry.name))
    return tree


def _status_kb(pid: int, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _tree(pid: int) -> list[int]:
    """``pid`` and every descendant (at most 1,024)."""
    tree = _children_by_parent()
    pids: list[int] = []
    todo = [pid]
    while todo and len(pids) < 1024:
        current = todo.pop()
        pids.append(current)
        todo.extend(tree.get(current, []))
    return pids


def _cpu_seconds(pid: int) -> float:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rfind(")") + 2 :].split()  # state is field 3; utime, stime are 14, 15
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_of_tree(pid: int) -> float:
    """CPU seconds (user + system) ``pid`` and its descendants have used so far, threads included."""
    return sum(_cpu_seconds(p) for p in _tree(pid))


def memory_of_tree(pid: int) -> Memory:
    """VmRSS and VmHWM of ``pid`` and every descendant (multi-process servers count whole)."""
    pids = _tree(pid)
    rss = sum(_status_kb(p, "VmRSS") for p in pids)
    hwm = sum(_status_kb(p, "VmHWM") for p in pids)
    return Memory(rss_mb=rss / 1024, peak_mb=hwm / 1024, processes=len(pids))
