"""What a durable write costs: PUT /collections/{id} of the ``distributed`` profile under wrk,
for each persistence and replication setting of docs/deployment.md ("Writes that survive a
failover").

A primary and one replica (``redis-server`` processes on loopback, their append-only files
under ``--out`` unless ``--dir`` says where: fsync costs what that disk makes it) and one service; wrk PUTs one 10-video collection per
connection over and over (``perf/put.lua``). Each setting runs ``--rounds`` times in turn
(round-robin, so drift on a shared machine spreads over all of them); the table gives the
median req/s and p99 per setting and the ratio to the first::

    python perf/bench_durability.py --rounds 3 --duration 5 --out /tmp/durability

Every process is started here and stopped by its PID; every run is bounded by ``--duration``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # `python perf/bench_durability.py`: make `perf` importable as a package
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perf.procs import HOST, LabError, free_port, running, wait_until_ok
from perf.redis_server import answers
from perf.service import main_argv, service_env
from perf.wrk import WrkResult, run_wrk

PUT_SCRIPT = Path(__file__).with_name("put.lua")


@dataclass(frozen=True)
class Setting:
    name: str
    appendfsync: str | None  # None: no append-only file
    wait_replicas: int


SETTINGS = (
    Setting("primary only (the default)", None, 0),
    Setting("appendfsync everysec", "everysec", 0),
    Setting("appendfsync always", "always", 0),
    Setting("WAIT 1 replica", None, 1),
    Setting("appendfsync always + WAIT 1", "always", 1),
)


@contextmanager
def redis_pair(setting: Setting, directory: Path, logs: Path) -> Iterator[int]:
    """A primary and a replica of it with ``setting``'s persistence; the primary's port."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise LabError("redis-server is missing: scripts/perf-up.sh installs it")
    persistence = (
        ["--appendonly", "no"]
        if setting.appendfsync is None
        else ["--appendonly", "yes", "--appendfsync", setting.appendfsync]
    )
    primary, replica = free_port(), free_port()
    with ExitStack() as stack:
        for port, extra in ((primary, []), (replica, ["--replicaof", HOST, str(primary)])):
            data = directory / str(port)
            data.mkdir(parents=True)
            argv = [binary, "--port", str(port), "--bind", HOST, "--save", "", "--dir", str(data)]
            stack.enter_context(running([*argv, *persistence, *extra], logs / f"redis-{port}.log"))
        deadline = time.monotonic() + 10
        while not (answers(primary) and answers(replica) and _linked(replica)):
            if time.monotonic() > deadline:
                raise LabError(f"the replica on {replica} did not link to {primary}; logs in {logs}")
            time.sleep(0.05)
        yield primary


def _linked(port: int) -> bool:
    import socket

    with socket.create_connection((HOST, port), timeout=0.5) as conn:
        conn.sendall(b"INFO replication\r\n")
        return b"master_link_status:up" in conn.recv(4096)


def measure(setting: Setting, duration_s: float, directory: Path, logs: Path) -> WrkResult:
    with redis_pair(setting, directory, logs) as redis_port:
        port = free_port()
        env = service_env(
            "http://127.0.0.1:9/unused",  # the fake video client calls nothing
            "unused",
            {
                "REDIS_URL": f"redis://{HOST}:{redis_port}/0",
                "INFLUENCER_STATS_VIDEO_CLIENT": "fake",
                "INFLUENCER_STATS_REDIS_WAIT_REPLICAS": str(setting.wait_replicas),
            },
        )
        log = logs / f"service-{port}.log"
        with running(main_argv("distributed", port), log, env=env) as service:
            wait_until_ok(port, "/readyz", service, log)
            url = f"http://{HOST}:{port}/collections/durable"
            result, _ = run_wrk(url, duration_s=duration_s, connections=16, threads=1, script=PUT_SCRIPT)
            return result


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds of wrk per setting and round")
    parser.add_argument("--out", type=Path, default=Path("perf/out/durability"))
    parser.add_argument(
        "--dir", type=Path, default=None, help="where the append-only files go (default: tmpfs)"
    )
    options = parser.parse_args()
    options.out.mkdir(parents=True, exist_ok=True)
    results: dict[str, list[WrkResult]] = {s.name: [] for s in SETTINGS}
    with tempfile.TemporaryDirectory(dir=options.dir or options.out) as scratch:
        for number in range(options.rounds):
            for setting in SETTINGS:
                directory = Path(scratch) / f"{number}-{SETTINGS.index(setting)}"
                result = measure(setting, options.duration, directory, options.out)
                if result.socket_errors.total:
                    raise LabError(f"{setting.name}: socket errors {result.socket_errors}")
                results[setting.name].append(result)
                answered = f"{result.requests_per_s:,.0f} req/s, {result.non_2xx} not acknowledged"
                print(f"round {number + 1} {setting.name}: {answered}", flush=True)
    base = statistics.median(r.requests_per_s for r in results[SETTINGS[0].name])
    print(
        "\n| setting | PUT req/s | × primary only | p99 ms | 503 (not acknowledged) |\n|---|---|---|---|---|"
    )
    for setting in SETTINGS:
        rate = statistics.median(r.requests_per_s for r in results[setting.name])
        p99 = statistics.median(r.p99_ms or float("nan") for r in results[setting.name])
        refused = sum(r.non_2xx for r in results[setting.name])
        total = sum(r.requests for r in results[setting.name])
        print(f"| {setting.name} | {rate:,.0f} | {rate / base:.2f} | {p99:.2f} | {refused} of {total:,} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
