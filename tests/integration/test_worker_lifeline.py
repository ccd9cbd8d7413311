"""Worker processes live and die with their service (``serving.lifeline``), over real processes and sockets.

- ``kill -9`` of the main process (one server of each runner, ``Server.runner``,
  with two workers: Granian's, uvicorn's under our supervisor, aiohttp's; the
  ``fast`` profile's one Granian worker): every process it started is gone
  within seconds, and a new service starts on the same port and answers.
- A worker stopped with SIGSTOP (two workers; a 2 s timeout): the service
  kills it, stops the others and exits 1 with one line naming it and why; no
  process of it is left.
- A worker whose graceful stop never ends (it ignores SIGTERM) is ended
  anyway once its parent is gone: the graceful shutdown plus 5 s later, with
  one line.
- Workers busy with requests keep beating: under load for three timeouts, the
  service stays up and answers every request.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from influencer_stats.config.resolve import offered
from influencer_stats.servers import server as server_named
from tests.support import (
    ROOT,
    SERVERS,
    SHARED_STORE_ARGS,
    children_of,
    profile_args,
    running_pids,
    running_service,
    wait_for,
)

#: Every worker shares the state (a store they share: SQLite with its slice; its server started by
#: the fixture, if it needs one), offline.
SHARED = [*SHARED_STORE_ARGS, "--cache", "none", "--video-client", "fake"]
pytestmark = pytest.mark.usefixtures("shared_store_server")
QUICK_STOP = {"INFLUENCER_STATS_GRACEFUL_SHUTDOWN": "3"}
LISTENING = "influencer-stats: listening on"
#: A new connection per request, so the kernel may hand each to another worker.
ONE_SHOT = httpx.Limits(max_keepalive_connections=0)

#: One server of each runner (``Server.runner``: the first registered), each runner's workers being its own.
BY_RUNNER: dict[str, str] = {}
for _name in SERVERS:
    BY_RUNNER.setdefault(server_named(_name).runner, _name)
_KILLED = {
    **{f"{name}-2-workers": ["--server", name, *SHARED, "--workers", "2"] for name in BY_RUNNER.values()},
    "fast-profile-granian-1-worker": [*profile_args("fast"), "--video-client", "fake"],
}


def _runs_here(args: list[str]) -> bool:
    """Whether its server and profile are installed here (a slice's may be removed)."""
    given = dict(zip(args[::2], args[1::2], strict=True))
    return given.get("--server", SERVERS[0]) in SERVERS and given.get("--profile", "demo") in offered()


KILLED = {label: args for label, args in _KILLED.items() if _runs_here(args)}


def _workers_of(pid: int) -> set[int]:
    """The service's worker processes: its children, less multiprocessing's resource tracker."""
    found = set()
    for child in children_of(pid):
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:  # it ended meanwhile
            continue
        if b"resource_tracker" not in command:
            found.add(child)
    return found


def _leave_nothing(pids: set[int]) -> None:
    """Kill what is left of ``pids`` (a failed test leaks no process; a stopped one is resumed to die)."""
    for pid in running_pids(pids):
        for sig in (signal.SIGCONT, signal.SIGKILL):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                break


def _errors(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("influencer-stats: error:")]


@pytest.mark.parametrize("args", KILLED.values(), ids=KILLED)
def test_killing_the_main_process_ends_every_worker_and_a_new_service_takes_the_port(
    args: list[str], tmp_path: Path
) -> None:
    env = {**QUICK_STOP, "TMPDIR": str(tmp_path)}
    started: set[int] = set()
    try:
        with running_service(args, tmp_path / "first.log", env=env) as first:
            assert wait_for(lambda: LISTENING in first.output(), 15), first.output()
            workers = _workers_of(first.process.pid)
            started = children_of(first.process.pid)
            port = int(first.url.rsplit(":", 1)[1])
            first.process.kill()
            first.process.wait(10)
            gone = wait_for(lambda: not running_pids(started), 15)
            assert gone, f"still running: {running_pids(started)}"
        with running_service(args, tmp_path / "second.log", env=env, port=port) as second:
            answered = httpx.get(f"{second.url}/healthz", timeout=5).status_code
    finally:
        _leave_nothing(started)

    assert len(workers) == (1 if "fast" in args[1] else 2)
    assert answered == 200


@pytest.mark.parametrize("server", SERVERS)
def test_a_worker_that_stops_answering_is_killed_and_the_service_exits_1_naming_it(
    server: str, tmp_path: Path
) -> None:
    env = {**QUICK_STOP, "TMPDIR": str(tmp_path), "INFLUENCER_STATS_WORKER_TIMEOUT": "2"}
    started: set[int] = set()
    victim = 0
    try:
        argv = ["--server", server, *SHARED, "--workers", "2"]
        with running_service(argv, tmp_path / "service.log", env=env) as service:
            assert wait_for(lambda: LISTENING in service.output(), 15), service.output()
            started = children_of(service.process.pid)
            victim = min(_workers_of(service.process.pid))
            os.kill(victim, signal.SIGSTOP)  # it cannot run, nor handle SIGTERM
            try:
                code: int | None = service.process.wait(30)
            except subprocess.TimeoutExpired:
                code = None
            gone = wait_for(lambda: not running_pids(started), 15)
    finally:
        _leave_nothing(started)

    assert code == 1, service.output()
    [said] = _errors(service.output())
    assert re.fullmatch(
        rf"influencer-stats: error: worker {victim} stopped answering \(its event loop did not beat "
        r"for \d+\.\d s\); killed it; stopped the others",
        said,
    ), said
    assert gone, f"still running: {running_pids(started)}"
    assert "Traceback" not in service.output()


#: A parent that forks one worker (as Granian does) whose graceful stop never ends.
STUBBORN = """
import multiprocessing, signal, time
from influencer_stats.serving.lifeline import Lifeline

def worker():
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    Lifeline(None, timeout_s=10.0, graceful_s=0.5).hold()
    print("worker", multiprocessing.current_process().pid, flush=True)
    time.sleep(60)

if __name__ == "__main__":
    multiprocessing.get_context("fork").Process(target=worker).start()
    time.sleep(60)
"""


def test_a_worker_whose_graceful_stop_never_ends_exits_anyway_once_its_parent_is_gone(
    tmp_path: Path,
) -> None:
    log = tmp_path / "stubborn.log"
    with log.open("wb") as out:
        parent = subprocess.Popen(
            [sys.executable, "-c", STUBBORN], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT
        )
    workers: set[int] = set()
    try:
        assert wait_for(lambda: "worker " in log.read_text(), 15), log.read_text()
        workers = {int(log.read_text().split()[1])}
        parent.kill()
        parent.wait(10)
        killed_at = time.monotonic()
        gone = wait_for(lambda: not running_pids(workers), 20)
        took = time.monotonic() - killed_at
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(10)
        _leave_nothing(workers)

    assert gone, f"still running: {running_pids(workers)}"
    assert took >= 5.0  # SIGTERM was ignored: only the backstop, 0.5 + 5 s on, ended it
    [said] = _errors(log.read_text())
    assert said == (
        f"influencer-stats: error: worker {min(workers)} did not stop within 6 s of its parent's end; exiting"
    )


@pytest.mark.parametrize("server", SERVERS)
def test_workers_busy_with_requests_keep_beating_and_the_service_stays_up(
    server: str, tmp_path: Path
) -> None:
    timeout_s = 3.0
    env = {**QUICK_STOP, "TMPDIR": str(tmp_path), "INFLUENCER_STATS_WORKER_TIMEOUT": str(timeout_s)}
    argv = ["--server", server, *SHARED, "--workers", "2"]
    with running_service(argv, tmp_path / "service.log", env=env) as service:
        assert wait_for(lambda: LISTENING in service.output(), 15), service.output()
        httpx.put(f"{service.url}/collections/busy", json={"videos": ["dQw4w9WgXcQ"]}, timeout=10)
        deadline = time.monotonic() + 3 * timeout_s
        statuses: list[list[int]] = [[] for _ in range(4)]

        def load(mine: list[int]) -> None:
            with httpx.Client(base_url=service.url, timeout=10, limits=ONE_SHOT) as http:
                while time.monotonic() < deadline:  # bounded: 9 s, each request 10 s at most
                    mine.append(http.get("/collections/busy/stats").status_code)

        threads = [threading.Thread(target=load, args=(mine,)) for mine in statuses]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(3 * timeout_s + 30)
        up = service.process.poll() is None

    answered = [status for mine in statuses for status in mine]
    assert up, service.output()
    assert not _errors(service.output())
    assert answered and set(answered) == {200}
