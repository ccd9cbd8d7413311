"""Hostile clients for the soak: a pipelining client that never reads, slowloris, a health prober.

All on loopback, each bounded by a stop time and a count of connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from dataclasses import dataclass, field

import httpx

from perf.procs import HOST


@dataclass
class AttackLog:
    """What the hostile clients did and what the server did to them."""

    pipelined_requests: int = 0
    slow_connections: int = 0
    slow_closed_by_server: int = 0
    health: list[tuple[int, float]] = field(default_factory=list)  # (status or -1, seconds)


async def _connect(port: int, receive_buffer: int | None = None) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if receive_buffer is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, (HOST, port))
    return sock


async def pipeline_without_reading(
    port: int, path: str, stop_at: float, log: AttackLog, batch: int = 100
) -> None:
    """Send pipelined GETs of ``path`` in batches and never read an answer, until ``stop_at``."""
    request = f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode() * batch
    loop = asyncio.get_running_loop()
    with contextlib.suppress(OSError):
        sock = await _connect(port, receive_buffer=4096)
        with sock:
            while time.monotonic() < stop_at:
                try:
                    await asyncio.wait_for(
                        loop.sock_sendall(sock, request), max(0.01, stop_at - time.monotonic())
                    )
                except TimeoutError:
                    return  # the server stopped reading us: the point of the attack, and of flow control
                log.pipelined_requests += batch


async def slowloris(port: int, stop_at: float, log: AttackLog, interval: float = 1.0) -> None:
    """Start a request, then trickle one header line per ``interval`` until ``stop_at`` or the server hangs up."""
    loop = asyncio.get_running_loop()
    try:
        sock = await _connect(port)
    except OSError:
        return
    log.slow_connections += 1
    with sock:
        try:
            await loop.sock_sendall(sock, f"GET /healthz HTTP/1.1\r\nHost: {HOST}\r\n".encode())
            n = 0
            while time.monotonic() < stop_at:
                await asyncio.sleep(interval)
                n += 1
                await loop.sock_sendall(sock, f"X-Slow-{n}: {n}\r\n".encode())
        except OSError:
            log.slow_closed_by_server += 1
            return
        # A send may still succeed after the server hung up (its reset comes later): read what is
        # left, for as long again as a line's interval, to see whether it did (its 408 then EOF).
        if await _hung_up(sock, 2 * interval):
            log.slow_closed_by_server += 1


async def _hung_up(sock: socket.socket, within_s: float) -> bool:
    """Whether the peer closed ``sock`` (EOF or a reset, after any answer) within ``within_s``."""
    loop = asyncio.get_running_loop()
    deadline = time.monotonic() + within_s
    try:
        while (left := deadline - time.monotonic()) > 0:
            if not await asyncio.wait_for(loop.sock_recv(sock, 4096), left):
                return True
    except OSError:
        return True
    except TimeoutError:
        return False
    return False


async def probe_health(url: str, stop_at: float, log: AttackLog, interval: float = 0.25) -> None:
    """A fresh connection to ``/healthz`` every ``interval``, as a liveness probe would: status and time."""
    while time.monotonic() < stop_at:
        started = time.monotonic()
        try:
            async with httpx.AsyncClient(timeout=5) as client:
                status = (await client.get(url + "/healthz")).status_code
        except httpx.HTTPError:
            status = -1
        log.health.append((status, time.monotonic() - started))
        await asyncio.sleep(interval)


async def attack(url: str, port: int, path: str, stop_at: float, pipeliners: int, slow: int) -> AttackLog:
    """Every hostile client at once until ``stop_at``."""
    log = AttackLog()
    await asyncio.gather(
        *(pipeline_without_reading(port, path, stop_at, log) for _ in range(pipeliners)),
        *(slowloris(port, stop_at, log) for _ in range(slow)),
        probe_health(url, stop_at, log),
    )
    return log
