"""A throwaway redis-server on loopback for the lab profiles that use Redis.

(Not ``perf/redis.py``: run as ``python perf/run.py``, perf/ is on sys.path and
that name would hide the redis package.)
"""

from __future__ import annotations

import shutil
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from influencer_stats.bootstrap.slots import SLOTS
from perf.procs import HOST, LabError, free_port, running
from perf.specs import lab_choices


def uses_redis(spec: str) -> bool:
    """Whether a choice the spec names declares it needs Redis (``Entry.needs``)."""
    return "redis" in {
        need
        for slot, value in lab_choices(spec).items()
        for name in value.split(",")
        if name in SLOTS[slot].registry
        for need in SLOTS[slot].registry[name].needs
    }


@contextmanager
def local_redis(spec: str, out: Path) -> Iterator[dict[str, str]]:
    """The service's environment for a redis-server started for ``spec`` (nothing if it uses none)."""
    if not uses_redis(spec):
        yield {}
        return
    with redis_process(out / f"redis-{spec}.log") as port:
        yield {"REDIS_URL": f"redis://{HOST}:{port}/0"}


@contextmanager
def redis_process(log: Path) -> Iterator[int]:
    """A redis-server on a free loopback port, no persistence, until it answers PING (10 s at
    most); stopped by its PID on exit. Yields its port."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise LabError("redis-server is missing: apt-get install redis-server (scripts/perf-up.sh)")
    port = free_port()
    argv = [binary, "--port", str(port), "--bind", HOST, "--save", "", "--appendonly", "no"]
    with running(argv, log) as process:
        deadline = time.monotonic() + 10
        while not answers(port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise LabError(f"redis-server did not answer on port {port}; log: {log}")
            time.sleep(0.05)
        yield port


def answers(port: int) -> bool:
    """Whether a redis-server on ``port`` answers PING."""
    try:
        with socket.create_connection((HOST, port), timeout=0.5) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False
