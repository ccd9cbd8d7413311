"""Redis commands per request of the ``distributed`` profile: a cached stats read, a write, the
read after a write, each with the near-cache and without (``--cache redis``).

Counts come from Redis itself: ``MONITOR`` while N requests run one at a time, less the
commands scripts run (``[0 lua]``: a script call is one round trip; the commands of a
pipeline are counted one by one, though they share one) and ``PING`` (the
near-cache's lease and the readiness checks send those whatever the load)::

    python perf/redis_commands.py --requests 500

The redis-server and the services are started here and stopped by their PIDs.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import sys
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

if __package__ in (None, ""):  # `python perf/redis_commands.py`: make `perf` importable as a package
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from perf.procs import HOST, LabError, free_port, running, wait_until_ok
from perf.redis_server import answers
from perf.service import main_argv, service_env

VIDEOS = [f"video{n:06d}" for n in range(10)]


def fresh(run: str, k: int) -> list[str]:
    """Ten video ids no request of this run asked for before (``run``: one letter)."""
    return [f"{run}{k:06d}{n:04d}" for n in range(10)]


class Monitor:
    """``MONITOR`` on a connection of its own, read by a thread: the commands clients send."""

    def __init__(self, port: int) -> None:
        self._conn = socket.create_connection((HOST, port), timeout=5)
        self._conn.sendall(b"MONITOR\r\n")
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        buffered = b""
        with suppress(OSError):
            while chunk := self._conn.recv(1 << 16):
                buffered += chunk
                *complete, buffered = buffered.split(b"\r\n")
                self.lines += [line.decode(errors="replace") for line in complete]

    def close(self) -> list[str]:
        time.sleep(0.2)  # what Redis sent for the last request
        self._conn.shutdown(socket.SHUT_RDWR)
        self._conn.close()
        self._thread.join(timeout=5)
        return self.lines


def per_request(port: int, n: int, request: Callable[[int], object]) -> tuple[float, dict[str, int]]:
    """Commands per request (a script one), and per command."""
    monitor = Monitor(port)
    for k in range(n):
        request(k)
    counted: dict[str, int] = {}
    for line in monitor.close():
        if " [" not in line or "[0 lua]" in line:
            continue
        name = line.split('] "', 1)[1].split('"', 1)[0].lower()
        if name not in ("ping", "monitor"):
            counted[name] = counted.get(name, 0) + 1
    return sum(counted.values()) / n, counted


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--out", type=Path, default=Path("perf/out/redis-commands"))
    options = parser.parse_args()
    options.out.mkdir(parents=True, exist_ok=True)
    binary = shutil.which("redis-server")
    if binary is None:
        raise LabError("redis-server is missing: scripts/perf-up.sh installs it")
    redis_port, n = free_port(), options.requests
    argv = [binary, "--port", str(redis_port), "--bind", HOST, "--save", "", "--appendonly", "no"]
    print("| cache | request | Redis commands per request | which |\n|---|---|---|---|")
    with running(argv, options.out / "redis.log"):
        deadline = time.monotonic() + 10
        while not answers(redis_port):
            if time.monotonic() > deadline:
                raise LabError("redis-server did not answer")
            time.sleep(0.05)
        for cache in ("near,redis", "redis"):
            port = free_port()
            env = service_env(
                "http://127.0.0.1:9/unused",
                "unused",
                {"REDIS_URL": f"redis://{HOST}:{redis_port}/0", "INFLUENCER_STATS_VIDEO_CLIENT": "fake"},
            )
            log = options.out / f"service-{cache}.log"
            with running([*main_argv("distributed", port), "--cache", cache], log, env=env) as service:
                wait_until_ok(port, "/readyz", service, log)
                with httpx.Client(base_url=f"http://{HOST}:{port}", timeout=5) as http:
                    http.put("/collections/warm", json={"videos": VIDEOS})
                    http.get("/collections/warm/stats")

                    def put_then_stats(k: int, tag: str = cache[0]) -> object:
                        http.put(f"/collections/n{k}", json={"videos": fresh(tag, k)}).raise_for_status()
                        return http.get(f"/collections/n{k}/stats").raise_for_status()

                    rows: dict[str, Callable[[int], object]] = {
                        "stats, cached": lambda k: http.get("/collections/warm/stats").raise_for_status(),
                        "PUT (replace)": lambda k: http.put(
                            f"/collections/w{k}", json={"videos": VIDEOS}
                        ).raise_for_status(),
                        "stats after a write (videos cached)": lambda k: http.get(
                            f"/collections/w{k}/stats"
                        ).raise_for_status(),
                        "PUT, then stats of 10 videos never seen": put_then_stats,
                    }
                    for name, request in rows.items():
                        average, counted = per_request(redis_port, n, request)
                        which = ", ".join(f"{c} {v / n:.2f}" for c, v in sorted(counted.items()))
                        print(f"| {cache} | {name} | {average:.2f} | {which} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
