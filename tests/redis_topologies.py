"""Real Redis topologies in containers: how their nodes run, are asked and controlled.

* tests/redis_sentinel_set.py, :func:`sentinel_set`: a primary, its replicas (one unless asked)
  and three sentinels (quorum 2).
* tests/redis_cluster_nodes.py, :func:`redis_cluster`: a Redis Cluster of
  ``primaries * (1 + replicas_per_primary)`` nodes.

Every node is a container of the image tests/containers.py picks (``local/redis:7`` with local
images, else ``redis:7-alpine``), always with host networking, bound to 127.0.0.1 on a free port
picked here: Sentinel and Cluster hand out the addresses their nodes announce, and only with host
networking is the address a node sees itself at (127.0.0.1:<port>) also where the tests and the
other nodes reach it. (On Docker Desktop host networking must be turned on.) Each container
carries the ``influencer-stats.test-pid`` label (``HostNetworkMixin.start``), so
scripts/docker-up.sh removes what a killed test run leaves behind.

Every wait is bounded: a container's start by ``STARTUP_TIMEOUT_S``, a topology's readiness by
``READY_TIMEOUT_S``, a failover by the caller's ``timeout_s``; each poll's commands time out
after ``COMMAND_TIMEOUT_S``, so a wait overruns its bound by one poll at most (a few seconds
when every node it asks is frozen).

Freezing is ``docker pause`` (the cgroup freezer), not SIGSTOP: it stops every process of the
container (also one started with ``exec``), Docker reports the container as paused (what
``docker ps`` shows while debugging says what the test did), and a paused container is still
removed by the teardown. For the network both look the same: the kernel still accepts
connections to the listening socket, but nothing ever answers on them.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack, suppress
from dataclasses import dataclass, field
from typing import Any, TypeVar

import redis

from tests.containers import (
    LOCAL_IMAGES,
    LOCAL_REDIS,
    POLL_S,
    STARTUP_TIMEOUT_S,
    Endpoint,
    HostNetworkMixin,
    RedisPingWaitStrategy,
    redis_command,
)

HOST = "127.0.0.1"
READY_TIMEOUT_S = 30.0  # replication linked, sentinels acquainted, cluster_state:ok
COMMAND_TIMEOUT_S = 1.0  # one command of a poll (a frozen node never answers)
CLUSTER_CREATE_TIMEOUT_S = 30  # `redis-cli --cluster create`, run with coreutils' `timeout`
CLUSTER_BUS_OFFSET = 10_000  # a Cluster node's bus listens on its port + 10000
SLOTS = 16_384

_T = TypeVar("_T")
# What a poll meets while a node cannot answer (yet): refused, timed out, an error reply.
PROBLEMS = (OSError, RuntimeError, ValueError, LookupError, redis.RedisError)


def _image() -> str:
    return LOCAL_REDIS if LOCAL_IMAGES else "redis:7-alpine"


def loopback_ports(count: int, *, bus_offset: int = 0) -> list[int]:
    """`count` distinct ports free on 127.0.0.1; with `bus_offset`, ``port + bus_offset`` is free too.

    The sockets are held until all are picked, so no port (or bus port) is handed out twice.
    Like ``tests.containers._free_port``, a port is free when picked, not reserved: another
    process could take it before the container binds it (the container's start then fails).
    """
    held: list[socket.socket] = []
    ports: list[int] = []
    try:
        for _ in range(50 * count):
            if len(ports) == count:
                return ports
            candidate = socket.socket()
            held.append(candidate)
            candidate.bind((HOST, 0))
            port = int(candidate.getsockname()[1])
            if bus_offset:
                if port + bus_offset > 65_535:
                    continue
                bus = socket.socket()
                held.append(bus)
                try:
                    bus.bind((HOST, port + bus_offset))
                except OSError:
                    continue
            ports.append(port)
        if len(ports) == count:
            return ports
        raise RuntimeError(
            f"found only {len(ports)} of {count} free loopback ports (bus offset {bus_offset})"
        )
    finally:
        for sock in held:
            sock.close()


def ask(endpoint: Endpoint | tuple[str, int], *args: str, timeout: float = COMMAND_TIMEOUT_S) -> Any:
    """One command through redis-py (decoded replies; arrays too, which ``redis_command`` does not parse)."""
    host, port = (endpoint.host, endpoint.port) if isinstance(endpoint, Endpoint) else endpoint
    with redis.Redis(
        host, port, socket_timeout=timeout, socket_connect_timeout=timeout, decode_responses=True
    ) as client:
        return client.execute_command(*args)


def info(endpoint: Endpoint, section: str, *, timeout: float = COMMAND_TIMEOUT_S) -> dict[str, str]:
    """``INFO section`` as a dict (``CLUSTER INFO`` with section ``"cluster-info"``)."""
    args = ("CLUSTER", "INFO") if section == "cluster-info" else ("INFO", section)
    reply = redis_command(endpoint.host, endpoint.port, *args, timeout=timeout) or b""
    fields = (line.partition(":") for line in reply.decode().splitlines() if ":" in line)
    return {key: value for key, _, value in fields}


def set_and_wait(
    endpoint: Endpoint, key: str, value: str, *, replicas: int = 1, timeout_ms: int = 2000
) -> int:
    """SET `key` on `endpoint`, then WAIT on the same connection: how many replicas have it
    (and every write before it) within `timeout_ms`.

    WAIT counts the replicas that acknowledged this connection's last write: sent on a new
    connection (``redis_command`` opens one per command) it has nothing to wait for and
    answers at once with every connected replica.
    """
    timeout = COMMAND_TIMEOUT_S + timeout_ms / 1000
    with redis.Redis(
        endpoint.host, endpoint.port, socket_timeout=timeout, socket_connect_timeout=timeout
    ) as client:
        with client.pipeline(transaction=False) as pipe:  # one connection for both
            pipe.set(key, value)
            pipe.execute_command("WAIT", replicas, timeout_ms)
            _, acknowledged = pipe.execute()
        return int(acknowledged)


def replication_flows(primary: Endpoint, replicas: int, key: str) -> bool:
    """A write on `primary` reaches its `replicas` within 200 ms (the key is deleted again).

    ``master_link_status:up`` is not enough: after a diskless full sync Redis 7.0 may hold
    the stream back until the replica's next REPLCONF ACK, up to a second later.
    """
    acknowledged = set_and_wait(primary, key, "probe", replicas=replicas, timeout_ms=200)
    redis_command(primary.host, primary.port, "DEL", key)
    return acknowledged >= replicas


def role(endpoint: Endpoint, *, timeout: float = COMMAND_TIMEOUT_S) -> str:
    """The first element of ``ROLE``: ``master``, ``slave`` or ``sentinel``."""
    return str(ask(endpoint, "ROLE", timeout=timeout)[0])


def wait_until(
    what: str,
    check: Callable[[], _T | None],
    timeout_s: float,
    diagnose: Callable[[], str] = lambda: "",
) -> _T:
    """Poll `check` every POLL_S until it returns something other than None (or False).

    Raises TimeoutError after `timeout_s` (plus at most one poll), naming `what`, the last
    error a poll met and what `diagnose` says.
    """
    deadline = time.monotonic() + timeout_s
    last_error: BaseException | None = None
    while True:
        try:
            result = check()
            if result is not None and result is not False:
                return result
        except PROBLEMS as error:
            last_error = error
        if time.monotonic() >= deadline:
            detail = f"; last error: {last_error!r}" if last_error is not None else ""
            raise TimeoutError(f"{what}: not within {timeout_s} s{detail}\n{diagnose()}")
        time.sleep(POLL_S)


def logs_of(endpoint: Endpoint, lines: int = 15) -> str:
    with suppress(Exception):
        tail = endpoint.container.get_wrapped_container().logs(tail=lines).decode(errors="replace")
        return f"--- {endpoint.port} ---\n{tail}"
    return f"--- {endpoint.port}: no logs ---"


def start_node(stack: ExitStack, command: Sequence[str], port: int) -> Endpoint:
    """A redis-server container on `port` (host networking), removed when `stack` closes."""
    wait = RedisPingWaitStrategy(port).with_startup_timeout(STARTUP_TIMEOUT_S).with_poll_interval(POLL_S)
    container = HostNetworkMixin(_image(), network_mode="host", _wait_strategy=wait).with_command(
        list(command)
    )
    stack.enter_context(container)
    return Endpoint(HOST, port, "redis", container)


def node_command(port: int, appendonly: bool, *extra: str) -> list[str]:
    """redis-server on 127.0.0.1:`port`; no RDB snapshots, AOF only when asked (then fsynced
    on every write); `extra` arguments last.

    ``repl-diskless-sync-delay 0``: Redis 7 waits 5 s by default before a full sync to a
    replica, for more replicas to join it; that would add 5 s to every start and every rejoin.
    """
    aof = ["--appendonly", "yes", "--appendfsync", "always"] if appendonly else ["--appendonly", "no"]
    return [
        *("redis-server", "--port", str(port), "--bind", HOST, "--save", ""),
        *(*aof, "--repl-diskless-sync-delay", "0", *extra),
    ]


@dataclass
class Controls:
    """kill / freeze / thaw of the containers of a topology, remembering which nodes are out."""

    killed: set[int] = field(default_factory=set)
    frozen: set[int] = field(default_factory=set)

    def kill(self, endpoint: Endpoint) -> None:
        """SIGKILL the container (it stays until the topology's teardown removes it)."""
        endpoint.container.get_wrapped_container().kill()
        self.killed.add(endpoint.port)

    def freeze(self, endpoint: Endpoint) -> None:
        """``docker pause``: every process of the container stops; connections hang unanswered."""
        endpoint.container.get_wrapped_container().pause()
        self.frozen.add(endpoint.port)

    def thaw(self, endpoint: Endpoint) -> None:
        """``docker unpause``: the node runs on from where it stopped (it may not know it was replaced)."""
        endpoint.container.get_wrapped_container().unpause()
        self.frozen.discard(endpoint.port)

    def is_up(self, endpoint: Endpoint) -> bool:
        """Neither killed nor frozen by these controls."""
        return endpoint.port not in self.killed | self.frozen
