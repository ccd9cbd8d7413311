"""``--workers N``: every server in N processes on one port, over real sockets.

- Each server with ``--workers 2`` and state every worker shares (SQLite, no
  in-process cache): one start-up line; keep-alive connections opened at once
  are answered; every read on a new connection sees the write before it;
  SIGTERM stops every process, exit 0, and the metrics directory created for
  the run is removed. That two workers answer, each counting in its metrics
  snapshot, and that a user's own directory is left in place, is the
  suite of the joint ``prometheus__workers`` (of the ``prometheus`` and ``workers`` slices).
- (``distributed --workers 2`` on Redis, read-your-writes of stats across workers: the
  ``redis`` slice's test_distributed.py.)
- State kept per process (each registered choice that declares it, and the
  profiles ``fast`` and ``youtube``): exit 2, one line naming it and what to use instead.
- A busy port, or a worker that cannot start: one line or a non-zero exit, no
  process left behind.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from http.client import HTTPConnection
from pathlib import Path

import httpx
import pytest

from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from influencer_stats.serving.environment import metrics_directory
from influencer_stats.setting_kinds import Choices
from influencer_stats.settings import Settings, declared
from tests.support import (
    ROOT,
    SERVERS,
    SHARED_STORE,
    SHARED_STORE_ARGS,
    START_TIMEOUT_S,
    RunningService,
    children_of,
    free_port,
    profile_args,
    running_pids,
    running_service,
    stop,
)

#: Every worker shares the state: a store they share (SQLite with its slice; its server started
#: by the fixture, if it needs one), no in-process cache; offline.
SHARED = [*SHARED_STORE_ARGS, "--cache", "none", "--video-client", "fake", "--workers", "2"]
pytestmark = pytest.mark.usefixtures("shared_store_server")
QUICK_STOP = {"INFLUENCER_STATS_GRACEFUL_SHUTDOWN": "3"}
PAIRS = 200
LISTENING = "influencer-stats: listening on"
#: A new connection per request, so the kernel may hand each to another worker.
ONE_SHOT = httpx.Limits(max_keepalive_connections=0)


def _wait_for(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def _wait_until_every_worker_listens(service: RunningService) -> None:
    """The start-up line says so (``running_service`` returns once /healthz answers: once one listens)."""
    assert _wait_for(lambda: LISTENING in service.output(), START_TIMEOUT_S), service.output()


def _requests_on_connections_opened_at_once(service: RunningService, count: int, path: str) -> list[int]:
    """Open ``count`` connections, then GET ``path`` on each; their statuses."""
    host, port = service.url.removeprefix("http://").split(":")
    connections = [HTTPConnection(host, int(port), timeout=10) for _ in range(count)]
    try:
        for connection in connections:
            connection.connect()
        statuses = []
        for connection in connections:
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            statuses.append(response.status)
        return statuses
    finally:
        for connection in connections:
            connection.close()


def _videos(n: int) -> list[str]:
    return [synthetic_video_id(n * 10 + k) for k in range(n % 5 + 1)]


def _said(output: str) -> list[str]:
    """What is not a JSON log event."""
    return [line for line in output.splitlines() if line and not line.startswith("{")]


def _stop_and_collect(service: RunningService) -> int | None:
    stop(service.process, timeout_s=20)
    return service.process.returncode


@pytest.mark.parametrize("server", SERVERS)
def test_two_workers_answer_on_one_port_agree_on_every_write_and_stop_together(
    server: str, tmp_path: Path
) -> None:
    temp = tmp_path / "tmp"  # where the service creates its metrics directory
    temp.mkdir()
    env = {**QUICK_STOP, "TMPDIR": str(temp), "INFLUENCER_STATS_DB": str(tmp_path / "shared.sqlite3")}
    with (
        running_service(["--server", server, *SHARED], tmp_path / "service.log", env=env) as service,
        httpx.Client(base_url=service.url, timeout=10, limits=ONE_SHOT) as http,
    ):
        [metrics] = temp.glob("influencer-stats-metrics-*")
        _wait_until_every_worker_listens(service)
        # Keep-alive connections opened at once (a benchmark's, a proxy's pool) reach both workers
        # (nothing else asks for /readyz).
        spread = _requests_on_connections_opened_at_once(service, 32, "/readyz")
        for n in range(PAIRS):
            videos = _videos(n)
            put = http.put("/collections/shared", json={"videos": videos})
            read = http.get("/collections/shared")
            assert put.status_code == (201 if n == 0 else 200), put.text
            assert read.json() == {"videos": videos}, n
        workers = children_of(service.process.pid)
        code = _stop_and_collect(service)

    assert spread == [200] * 32
    assert len(workers) >= 2, workers
    assert code == 0
    assert _wait_for(lambda: not running_pids(workers), 5), running_pids(workers)
    assert not metrics.exists()
    [said] = [line for line in service.output().splitlines() if line.startswith(LISTENING)]
    assert said.startswith(
        f"{LISTENING} {service.url} with 2 worker processes (profile demo: server {server}, "
    )
    assert "Traceback" not in service.output()
    assert service.output().count('"event":"service.started"') == 2


def test_one_worker_needs_no_metrics_directory_and_several_get_a_fresh_one_removed_after() -> None:
    one = Settings(choices=Choices({}))
    several = Settings(choices=Choices({}), workers=3)
    environ: dict[str, str] = {}

    with metrics_directory(one, environ) as unchanged:
        assert unchanged is one and environ == {}
    with metrics_directory(several, environ) as shared:
        directory = Path(str(shared.prometheus_multiproc_dir))
        assert environ == {"PROMETHEUS_MULTIPROC_DIR": str(directory)}
        assert directory.is_dir() and not list(directory.iterdir())
        assert directory.stat().st_mode & 0o077 == 0  # private
        (directory / "123.json").write_text("{}")

    assert environ == {} and not directory.exists()


# --- refused ----------------------------------------------------------------------


def _main(*args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "main.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "YOUTUBE_API_URL": "http://127.0.0.1:9/youtube/v3/videos", **(env or {})},
        check=False,
    )


def _kept_per_process() -> dict[str, tuple[list[str], str]]:
    """Each registered choice that declares its state kept per process (``Entry.per_process``), with
    the line that refuses it: the core's stores and whatever the installed slices register."""
    cases = {}
    for slot in SLOTS.values():
        for name in slot.names():
            kept = slot.registry[name].per_process if name in slot.registry else None
            if kept is not None:
                refusal = f"keeps {kept[0]} in each process: with --workers 2 use {slot.instead(name)}"
                cases[f"{slot.flag} {name}"] = (
                    [slot.flag, name],
                    f"{slot.name.replace('_', ' ')} {name!r} {refusal}",
                )
    return cases


PER_PROCESS = _kept_per_process()


@pytest.mark.parametrize(("args", "reason"), list(PER_PROCESS.values()), ids=list(PER_PROCESS))
def test_state_kept_per_process_refuses_two_workers_in_one_line_saying_what_to_use(
    args: list[str], reason: str
) -> None:
    result = _main(*args, "--workers", "2", "--port", str(free_port()))

    assert result.returncode == 2
    assert result.stderr.startswith(f"main.py: error: {reason}"), result.stderr
    assert result.stderr.count("\n") == 1 and result.stdout == ""


@pytest.mark.parametrize("name", ["fast", "youtube"])
def test_a_profile_keeping_state_per_process_refuses_two_workers_in_one_line(name: str) -> None:
    # Which choice of it is refused first depends on the slices installed (on the core, fast's
    # dict store and youtube's memory quota ledger; with the stats cache, youtube's cache).
    result = _main(*profile_args(name), "--workers", "2", "--port", str(free_port()))

    assert result.returncode == 2
    assert result.stderr.startswith("main.py: error: "), result.stderr
    assert " in each process: with --workers 2 use --" in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1 and result.stdout == ""


@pytest.mark.parametrize("server", SERVERS)
def test_a_busy_port_is_one_line_and_exit_1_with_two_workers(server: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = _main("--server", server, *SHARED, "--port", str(port))

    assert result.returncode == 1
    assert _said(result.stderr) == [
        f"influencer-stats: error: cannot listen on 127.0.0.1:{port}: address already in use"
    ]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("server", SERVERS)
def test_a_second_instance_with_two_workers_cannot_share_the_port(server: str, tmp_path: Path) -> None:
    # Its workers bind with SO_REUSEPORT, as the first instance's did: the kernel would allow it.
    with running_service(["--server", server, *SHARED], tmp_path / "first.log", env=QUICK_STOP) as first:
        port = first.url.rsplit(":", 1)[1]
        second = _main(
            "--server",
            server,
            *SHARED,
            "--port",
            port,
            env={"INFLUENCER_STATS_DB": str(tmp_path / "b.db")},
        )
        answered = httpx.get(f"{first.url}/healthz").status_code

    assert second.returncode == 1
    assert _said(second.stderr) == [
        f"influencer-stats: error: cannot listen on 127.0.0.1:{port}: address already in use"
    ]
    assert answered == 200


def _unbuildable(blocker: Path) -> dict[str, str]:
    """Settings with which the shared store's build fails in every worker, from what its entry
    declares: a file it writes under ``blocker`` (a file: the folder cannot be created), else the
    server it needs at a closed port (its ``<NEED>_URL``)."""
    assert SHARED_STORE is not None  # the module's fixture, shared_store_server, has failed without one
    entry = SLOTS["store"].registry[SHARED_STORE]
    if entry.paths:
        return {declared()[entry.paths[0]].env: str(blocker / "store")}
    urls = {spec.env for spec in declared().values()}
    [(need, url)] = [(n, f"{n.upper()}_URL") for n in entry.needs if f"{n.upper()}_URL" in urls]
    return {url: f"{need}://127.0.0.1:{free_port()}/0"}  # a closed port: each worker's build fails


@pytest.mark.parametrize("server", SERVERS)
def test_a_worker_that_cannot_start_stops_the_service_non_zero_leaving_no_process(
    server: str, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    log = tmp_path / "service.log"
    env = {
        **os.environ,
        **QUICK_STOP,
        "TMPDIR": str(tmp_path),
        **_unbuildable(blocker),
    }
    argv = [sys.executable, "main.py", "--server", server, *SHARED, "--port", str(free_port())]
    seen: set[int] = set()
    with log.open("wb") as out:
        process = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while process.poll() is None and time.monotonic() < deadline:
            seen |= children_of(process.pid)
            time.sleep(0.05)
    finally:
        code = stop(process)

    assert code not in (0, None)
    assert LISTENING not in log.read_text()
    assert _wait_for(lambda: not running_pids(seen), 5), running_pids(seen)
    assert not list(tmp_path.glob("influencer-stats-metrics-*"))


def test_main_py_with_two_workers_announces_them_once(tmp_path: Path) -> None:
    with running_service([*SHARED_STORE_ARGS, "--workers", "2"], tmp_path / "workers.log") as service:
        answered = httpx.get(f"{service.url}/healthz").status_code
        # A worker may answer before the parent has heard from both and said so: wait for it (bounded).
        deadline = time.monotonic() + 20
        while "listening on" not in service.output() and time.monotonic() < deadline:
            time.sleep(0.05)

    said = [
        line for line in service.output().splitlines() if line.startswith("influencer-stats: listening on")
    ]
    assert answered == 200
    assert said == [
        f"influencer-stats: listening on {service.url} with 2 worker processes (profile demo: server starlette, "
        + said[0].partition("(profile demo: server starlette, ")[2]
    ]


def test_an_env_file_reaches_every_worker(tmp_path: Path) -> None:
    env_file = tmp_path / "service.env"
    env_file.write_text("INFLUENCER_STATS_MAX_VIDEOS=1\n")  # a setting without a flag: workers read it
    args = ["--env-file", str(env_file), *SHARED_STORE_ARGS, "--workers", "2"]
    with running_service(args, tmp_path / "workers.log") as service:
        # Fresh connections: the kernel spreads them over both workers.
        answers = [
            httpx.put(f"{service.url}/collections/c{n}", json={"videos": ["-4lB5EKS5Uk", "aaaaaaaaaaa"]})
            for n in range(12)
        ]

    assert {answer.status_code for answer in answers} == {422}
