"""Starting the real service as a process, for end-to-end tests."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest

from influencer_stats.algebras.metrics import RequestRecorder
from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.bootstrap.supervision import SUPERVISION
from influencer_stats.bootstrap.videos import HTTP_LIBRARIES, VIDEO_CLIENTS, batches, needs_key
from influencer_stats.config.profiles import PROFILES
from perf.procs import free_port, stop
from tests.declared_paths import redirected_paths

__all__ = [
    "A_YOUTUBE_CLIENT",
    "ONE_CLIENT_PER_LIBRARY",
    "SERVERS",
    "SHARED_STORE",
    "SHARED_STORE_ARGS",
    "YOUTUBE_CLIENTS",
    "RecordingMetrics",
    "RunningService",
    "children_of",
    "free_port",
    "running_double_process",
    "running_pids",
    "running_service",
    "stop",
]

ROOT = Path(__file__).resolve().parent.parent
#: Every registered server: suites that run against "each server" take this list.
SERVERS = list(SLOTS["server"].names())
#: The worker counts a suite starts each server with: two as well while a supervisor is installed
#: (``bootstrap.supervision``: the ``workers`` slice); the core serves one process.
WORKER_COUNTS = ["1", "2"] if SUPERVISION.supervisor is not None else ["1"]


def profile_args(name: str) -> list[str]:
    """``--profile NAME``, and for each choice of it not installed (a removed slice's server or
    stats cache) the slot's first choice instead: the profile's stores, caches and loggers, on what is here."""
    given = ["--profile", name]
    for slot, choice in instead_of_slices(name).items():
        given += [SLOTS[slot].flag, choice]
    return given


def profile_env(name: str) -> dict[str, str]:
    """``profile_args`` as environment variables (``INFLUENCER_STATS_PROFILE``, and each slot's
    variable for a choice not installed), for what takes no flags (``uvicorn main:app``)."""
    given = {"INFLUENCER_STATS_PROFILE": name}
    for slot, choice in instead_of_slices(name).items():
        given[SLOTS[slot].env] = choice
    return given


def installed_env(env: Mapping[str, object]) -> dict[str, str]:
    """What runs ``env`` (a deployment's variables: compose's) on what is installed: for each choice of
    its profile not installed and not set in ``env``, its slot's first (``profile_env``); for each slot
    variable of ``env`` naming a choice not installed, the slot's first whose calls spend quota (a video
    client calling YouTube, as the deployment's does), else its first. Set after ``env``'s own."""
    instead = {k: v for k, v in profile_env(str(env["INFLUENCER_STATS_PROFILE"])).items() if k not in env}
    for slot in SLOTS.values():
        if slot.env not in env:
            continue
        try:
            slot.parse(str(env[slot.env]))
        except ValueError:
            calling = [entry.name for entry in slot.registry if entry.spends_quota]
            instead[slot.env] = calling[0] if calling else slot.names()[0]
    return instead


def instead_of_slices(name: str) -> dict[str, str]:
    """For each choice of profile NAME not installed (a removed slice's server, video cache …),
    the slot's first choice (``none`` for wrappers), as flags: NAME's other choices, on what is here."""
    instead: dict[str, str] = {}
    for slot, choice in PROFILES[name].choices.items():
        try:
            SLOTS[slot].parse(choice)
        except ValueError:
            instead[slot] = SLOTS[slot].names()[0]
    return instead


#: A store every worker shares (its entry keeps nothing per process), one reaching no server
#: first: SQLite with its slice, else Redis with its own; None with neither (no store workers
#: share is installed: a service of several workers is refused, and the suites starting one fail
#: in the ``shared_store_server`` fixture, saying so). Suites that want state workers share take it.
SHARED_STORE: str | None = next(
    (
        entry.name
        for entry in sorted(SLOTS["store"].registry, key=lambda e: bool(e.needs))
        if entry.per_process is None
    ),
    None,
)


#: Its flag, for a service whose workers share their state; a test starting one asks for the
#: ``shared_store_server`` fixture (``tests/integration/conftest.py``): the server it needs, if any.
SHARED_STORE_ARGS: tuple[str, ...] = ("--store", SHARED_STORE) if SHARED_STORE is not None else ()


#: The video clients that call videos.list over HTTP (not the offline fake): each asks for a key.
YOUTUBE_CLIENTS = tuple(entry.name for entry in VIDEO_CLIENTS if entry.check is needs_key)


#: One of them for each HTTP library registered (the first of each): what is particular to a
#: library (its hooks, its headers) on each, whatever the clients installed.
def _first_of_each_library() -> tuple[str, ...]:
    first: dict[object, str] = {}
    for name in YOUTUBE_CLIENTS:
        first.setdefault(HTTP_LIBRARIES[name], name)
    return tuple(first.values())


ONE_CLIENT_PER_LIBRARY = _first_of_each_library()
#: The YouTube client the suites run a real stack on: the first that batches (the batching
#: slice's), else the first (one id a call).
A_YOUTUBE_CLIENT = next((name for name in YOUTUBE_CLIENTS if batches(name)), YOUTUBE_CLIENTS[0])


class RecordingMetrics:
    """``AllMetrics`` (every role) that keeps what the wrappers record, for tests to assert on."""

    def __init__(self) -> None:
        self.cache_events: list[str] = []
        self.upstream_calls: list[str] = []
        self.breaker_states: list[str] = []
        self.video_cache: dict[str, int] = {}
        self.saved: dict[str, int] = {}
        self.quota_spent = 0
        self.quota_left: int | None = None
        self.quota_stale_answers = 0
        self.logs_dropped_total = 0
        self.dependencies: dict[str, bool] = {}

    def request(self, route: str, method: str, status: int, seconds: float) -> None:
        pass

    def recorder(self, route: str, method: str) -> RequestRecorder:
        return partial(self.request, route, method)

    def upstream_call(self, outcome: str, seconds: float) -> None:
        self.upstream_calls.append(outcome)

    def cache_event(self, kind: str) -> None:
        self.cache_events.append(kind)

    def loop_lag(self, seconds: float) -> None:
        pass

    def logs_dropped(self, count: int) -> None:
        self.logs_dropped_total += count

    def dependency(self, name: str, up: bool) -> None:
        self.dependencies[name] = up

    def breaker_state(self, state: str) -> None:
        self.breaker_states.append(state)

    def video_cache_event(self, kind: str, count: int) -> None:
        self.video_cache[kind] = self.video_cache.get(kind, 0) + count

    def calls_saved(self, by: str, count: int) -> None:
        self.saved[by] = self.saved.get(by, 0) + count

    def quota(self, spent: int, left: int | None) -> None:
        self.quota_spent += spent
        self.quota_left = left

    def quota_stale_answer(self) -> None:
        self.quota_stale_answers += 1

    def render(self) -> tuple[bytes, str]:
        return b"", "text/plain"


@dataclass
class RunningService:
    url: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")


#: How long a service started by a test may take to answer: as long as the service gives its workers
#: to listen (the ``workers`` slice's supervisor). 20 s was too short on a busy machine: the parent
#: and two spawned workers each import the whole service, 18 s on two cores busy with other tests.
START_TIMEOUT_S = 60.0


def wait_until_healthy(url: str, process: subprocess.Popen[bytes], timeout: float = START_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"service exited with {process.returncode} before answering")
        try:
            if httpx.get(url + "/healthz", timeout=0.5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise TimeoutError(f"{url} did not become healthy within {timeout}s")


def every_worker_started(output: Callable[[], str], workers: int) -> None:
    """Wait until each of ``workers`` processes has said it started (one answering is not all of them).

    A signal that reaches a worker still importing finds no lifespan to drain, and the server
    kills it: a test counting graceful stops must not send one before every worker is up.
    """
    started = wait_for(lambda: output().count('"event":"service.started"') == workers, START_TIMEOUT_S)
    assert started, output()[-3000:]


@contextmanager
def running_service(
    args: Sequence[str],
    log_path: Path,
    *,
    env: Mapping[str, str] | None = None,
    command: Sequence[str] | None = None,
    port: int | None = None,
) -> Iterator[RunningService]:
    """Run ``main.py ARGS --port <free>`` (or ``command``; or on ``port``) until the block ends."""
    port = port or free_port()
    argv = [*(command or [sys.executable, "main.py"]), *args, "--port", str(port)]
    # Each service writes its files (every path an entry declares) beside its log, unless the test says.
    files = redirected_paths(log_path.parent / f"{log_path.stem}-files")
    # No snapshots or refreshes unless the test asks: an hour's turn inside a test counting
    # YouTube calls would find the youtube and distributed profiles' passes among them. Nor does
    # the fake client's world grow: a test comparing its answers with the synthetic counters
    # (``expected_stats``) would see them move after the first minute.
    quiet = {
        "INFLUENCER_STATS_SNAPSHOT_INTERVAL": "0",
        "INFLUENCER_STATS_SOURCE_REFRESH_INTERVAL": "0",
        "INFLUENCER_STATS_FAKE_GROWTH": "0",
    }
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **quiet, **files, **(env or {})}
    with log_path.open("wb") as log:
        process = subprocess.Popen(argv, cwd=ROOT, env=full_env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, process)
        yield RunningService(url, process, log_path)
    finally:
        stop(process)


@contextmanager
def running_double_process(log_path: Path, latency_ms: int = 0) -> Iterator[str]:
    """The project's YouTube double as its own process (each call delayed ``latency_ms``); yields
    its videos.list URL."""
    port = free_port()
    argv = [sys.executable, "-m", "youtube_double", "--port", str(port)]
    argv += ["--latency-ms", str(latency_ms)]
    with log_path.open("wb") as log:
        process = subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until_healthy(f"http://127.0.0.1:{port}", process)
        yield f"http://127.0.0.1:{port}/youtube/v3/videos"
    finally:
        stop(process)


def children_of(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (Linux: read from /proc)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after its last ")".
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # it ended meanwhile
            continue
        if fields and int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def running_pids(pids: set[int]) -> set[int]:
    """Those of ``pids`` that still run (neither gone nor a zombie)."""
    alive = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X"):
            alive.add(pid)
    return alive


def expected_stats(videos: Sequence[str]) -> dict[str, Any]:
    """The stats body any server must answer for ``videos`` when YouTube is the double (synthetic counters)."""
    from influencer_stats.domain.models import VideoBatch, VideoId
    from influencer_stats.interpreters.videos.synthetic import synthetic_stats
    from influencer_stats.logic.stats import collection_stats

    ids = [VideoId(v) for v in videos]
    stats = collection_stats(ids, VideoBatch({v: synthetic_stats(v) for v in ids}))
    return {
        "impressions": stats.impressions,
        "engagements": stats.engagements,
        "score": stats.score,
        "videos": stats.videos,
        "missing": [],
    }


def wait_for(condition: Callable[[], bool], timeout: float) -> bool:
    """Poll ``condition()`` every 50 ms until true or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if condition():
                return True
        except (httpx.TransportError, OSError, RuntimeError):
            pass
        time.sleep(0.05)
    return False


def run_perf_script(script: str, args: Sequence[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
    """``python perf/SCRIPT ARGS`` in its own process group, killed whole if it overruns
    (SIGTERM first: the lab stops the servers it started; then SIGKILL)."""
    process = subprocess.Popen(
        [sys.executable, f"perf/{script}", *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            out, err = process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate(timeout=20)
        pytest.fail(f"perf/{script} did not finish within {timeout_s:g}s:\n{err[-3000:]}")
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample in the text exposition format (0 when absent)."""
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    total = 0.0
    for line in text.splitlines():
        match = re.fullmatch(rf"{name}(?:\{{(.*)\}})? (\S+)", line)
        if match and ",".join(sorted((match.group(1) or "").split(","))).strip(",") == wanted:
            total += float(match.group(2))
    return total
