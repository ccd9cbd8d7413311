"""Real Redis topologies in containers: a Sentinel set and a Cluster, with controls to kill,
freeze and thaw their nodes and to wait for the failover that follows.

* :func:`sentinel_set`: a primary, its replicas (one unless asked) and three sentinels (quorum 2).
* :func:`redis_cluster`: a Redis Cluster of ``primaries * (1 + replicas_per_primary)`` nodes.

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

import shlex
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any, TypeVar

import redis
from redis.crc import key_slot

from tests.containers import (
    LOCAL_IMAGES,
    LOCAL_REDIS,
    POLL_S,
    STARTUP_TIMEOUT_S,
    Endpoint,
    HostNetworkMixin,
    RedisPingWaitStrategy,
    redis_command,
    require_docker,
)

HOST = "127.0.0.1"
READY_TIMEOUT_S = 30.0  # replication linked, sentinels acquainted, cluster_state:ok
COMMAND_TIMEOUT_S = 1.0  # one command of a poll (a frozen node never answers)
CLUSTER_CREATE_TIMEOUT_S = 30  # `redis-cli --cluster create`, run with coreutils' `timeout`
CLUSTER_BUS_OFFSET = 10_000  # a Cluster node's bus listens on its port + 10000
SLOTS = 16_384

_T = TypeVar("_T")
# What a poll meets while a node cannot answer (yet): refused, timed out, an error reply.
_PROBLEMS = (OSError, RuntimeError, ValueError, LookupError, redis.RedisError)


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


def _replication_flows(primary: Endpoint, replicas: int, key: str) -> bool:
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


def _wait_until(
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
        except _PROBLEMS as error:
            last_error = error
        if time.monotonic() >= deadline:
            detail = f"; last error: {last_error!r}" if last_error is not None else ""
            raise TimeoutError(f"{what}: not within {timeout_s} s{detail}\n{diagnose()}")
        time.sleep(POLL_S)


def _logs(endpoint: Endpoint, lines: int = 15) -> str:
    with suppress(Exception):
        tail = endpoint.container.get_wrapped_container().logs(tail=lines).decode(errors="replace")
        return f"--- {endpoint.port} ---\n{tail}"
    return f"--- {endpoint.port}: no logs ---"


def _start(stack: ExitStack, command: Sequence[str], port: int) -> Endpoint:
    """A redis-server container on `port` (host networking), removed when `stack` closes."""
    wait = RedisPingWaitStrategy(port).with_startup_timeout(STARTUP_TIMEOUT_S).with_poll_interval(POLL_S)
    container = HostNetworkMixin(_image(), network_mode="host", _wait_strategy=wait).with_command(
        list(command)
    )
    stack.enter_context(container)
    return Endpoint(HOST, port, "redis", container)


def _node_command(port: int, appendonly: bool, *extra: str) -> list[str]:
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
class _Controls:
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


# --- Sentinel ---------------------------------------------------------------------------------


@dataclass
class SentinelTopology:
    """What :func:`sentinel_set` yields: the nodes as started, and controls over them.

    `primary` and `replica` are the nodes as started; after a failover ask
    :meth:`current_primary`. `sentinels` are ``(host, port)`` pairs, as
    ``redis.sentinel.Sentinel`` takes them; `sentinel_endpoints` the same as Endpoints (to
    kill or freeze a sentinel).
    """

    primary: Endpoint
    replicas: list[Endpoint]
    sentinel_endpoints: list[Endpoint]
    master_name: str
    controls: _Controls = field(default_factory=_Controls)

    @property
    def replica(self) -> Endpoint:
        """The first replica as started."""
        return self.replicas[0]

    @property
    def sentinels(self) -> list[tuple[str, int]]:
        return [(s.host, s.port) for s in self.sentinel_endpoints]

    @property
    def nodes(self) -> list[Endpoint]:
        """The data nodes (primary and replicas as started)."""
        return [self.primary, *self.replicas]

    def kill(self, endpoint: Endpoint) -> None:
        self.controls.kill(endpoint)

    def freeze(self, endpoint: Endpoint) -> None:
        self.controls.freeze(endpoint)

    def thaw(self, endpoint: Endpoint) -> None:
        self.controls.thaw(endpoint)

    def node_at(self, host: str, port: int) -> Endpoint:
        """The data node listening at `host`:`port` (as a sentinel reports it)."""
        for node in self.nodes:
            if (node.host, node.port) == (host, port):
                return node
        raise LookupError(f"no node of this set listens at {host}:{port}")

    def _addresses(self) -> list[tuple[str, int]]:
        """The primary's address per live sentinel that answers (a sentinel that does not is left out)."""
        addresses = []
        for sentinel in self.sentinel_endpoints:
            if not self.controls.is_up(sentinel):
                continue
            with suppress(*_PROBLEMS):
                reply = ask(sentinel, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", self.master_name)
                if reply:
                    addresses.append((str(reply[0]), int(reply[1])))
        return addresses

    def current_primary(self) -> Endpoint:
        """The node the first answering sentinel names (SENTINEL GET-MASTER-ADDR-BY-NAME)."""
        addresses = self._addresses()
        if not addresses:
            raise RuntimeError(f"no sentinel of {self.sentinels} names a primary for {self.master_name!r}")
        return self.node_at(*addresses[0])

    def wait_for_promotion(self, old: Endpoint, timeout_s: float) -> Endpoint:
        """The new primary, once every answering sentinel (at least a majority of the three)
        names the same address other than `old`'s and that node answers ROLE ``master``.

        Raises TimeoutError after `timeout_s`.
        """

        def promoted() -> Endpoint | None:
            addresses = self._addresses()
            if len(addresses) * 2 <= len(self.sentinel_endpoints) or len(set(addresses)) != 1:
                return None
            node = self.node_at(*addresses[0])
            return node if node != old and role(node) == "master" else None

        return _wait_until(
            f"a primary other than {old.port} for {self.master_name!r}", promoted, timeout_s, self.diagnose
        )

    def wait_for_replica_of(self, node: Endpoint, primary: Endpoint, timeout_s: float) -> None:
        """Until `node` is a replica of `primary` with its link up (e.g. a thawed old primary,
        which the sentinels reconfigure). Raises TimeoutError after `timeout_s`."""

        def linked() -> bool:
            replication = info(node, "replication")
            return (
                replication.get("role") == "slave"
                and replication.get("master_port") == str(primary.port)
                and replication.get("master_link_status") == "up"
            )

        _wait_until(f"{node.port} a replica of {primary.port}", linked, timeout_s, self.diagnose)

    def diagnose(self) -> str:
        """What each sentinel reports, and the nodes' last log lines (for a failing wait)."""
        lines = []
        for sentinel in self.sentinel_endpoints:
            try:
                lines.append(f"sentinel {sentinel.port}: {info(sentinel, 'sentinel').get('master0')}")
            except _PROBLEMS as error:
                lines.append(f"sentinel {sentinel.port}: {error!r}")
        return "\n".join([*lines, *(_logs(node) for node in [*self.nodes, *self.sentinel_endpoints])])


def _sentinel_command(port: int, settings: Sequence[str]) -> list[str]:
    """``sh -c`` writing sentinel.conf in the container, then exec'ing the sentinel.

    Sentinel refuses to start without a config file it can rewrite (it records its id, the
    replicas and sentinels it found, the epochs and, after a failover, the new primary).
    """
    lines = [f"port {port}", f"bind {HOST}", "dir /data", *settings]
    conf = "/data/sentinel.conf"
    quoted = " ".join(shlex.quote(line) for line in lines)
    return ["sh", "-c", f"printf '%s\\n' {quoted} > {conf} && exec redis-server {conf} --sentinel"]


@contextmanager
def sentinel_set(
    master_name: str = "main",
    down_after_ms: int = 1000,
    failover_timeout_ms: int = 3000,
    *,
    quorum: int = 2,
    appendonly: bool = False,
    replicas: int = 1,
) -> Iterator[SentinelTopology]:
    """Start a primary, `replicas` replicas of it and three sentinels monitoring it as `master_name`.

    Five containers (host networking, 127.0.0.1, free ports), ``--save ''`` and no AOF unless
    `appendonly` (then ``appendfsync always``). Sentinels: `quorum`, `down_after_ms`,
    `failover_timeout_ms`, ``parallel-syncs 1``; killing or freezing the primary gets the
    replica promoted within a few seconds (`down_after_ms` to notice, then the vote; a failed vote
    is retried after ``2 * failover_timeout_ms``).

    Yields once the replica reports ``master_link_status:up``, a write on the primary reaches
    it (then is deleted: the set starts empty), and every sentinel reports the primary ok with
    its replicas, three sentinels and a reachable quorum (SENTINEL CKQUORUM); each container start is bounded by STARTUP_TIMEOUT_S, that readiness by READY_TIMEOUT_S.
    Leaving the context removes every container (killed and paused ones too).
    """
    require_docker()
    primary_port, *ports = loopback_ports(4 + replicas)
    replica_ports, sentinel_ports = ports[:replicas], ports[replicas:]
    settings = [
        f"sentinel monitor {master_name} {HOST} {primary_port} {quorum}",
        f"sentinel down-after-milliseconds {master_name} {down_after_ms}",
        f"sentinel failover-timeout {master_name} {failover_timeout_ms}",
        f"sentinel parallel-syncs {master_name} 1",
    ]
    with ExitStack() as stack:
        primary = _start(stack, _node_command(primary_port, appendonly), primary_port)
        replica_of = ["--replicaof", HOST, str(primary_port)]
        started = [
            _start(stack, _node_command(port, appendonly, *replica_of), port) for port in replica_ports
        ]
        sentinels = [_start(stack, _sentinel_command(port, settings), port) for port in sentinel_ports]
        topology = SentinelTopology(primary, started, sentinels, master_name)

        def ready() -> bool:
            if any(info(r, "replication").get("master_link_status") != "up" for r in started):
                return False
            if not _replication_flows(primary, replicas, "redis-topologies:probe"):
                return False
            for sentinel in sentinels:
                master = info(sentinel, "sentinel").get("master0", "")
                expected = f"name={master_name},status=ok,address={HOST}:{primary_port},slaves={replicas},sentinels=3"
                if master != expected:
                    return False
                check = redis_command(sentinel.host, sentinel.port, "SENTINEL", "CKQUORUM", master_name)
                if not (check or b"").startswith(b"OK 3 usable"):
                    return False
            return True

        _wait_until("the sentinel set ready", ready, READY_TIMEOUT_S, topology.diagnose)
        yield topology


# --- Cluster ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusterNodeView:
    """One line of CLUSTER NODES: a node as another node (or itself) sees it."""

    node_id: str
    port: int
    flags: frozenset[str]
    primary_id: str | None
    connected: bool
    slots: tuple[tuple[int, int], ...]  # inclusive ranges

    @property
    def is_primary(self) -> bool:
        return "master" in self.flags

    @property
    def failed(self) -> bool:
        return bool(self.flags & {"fail", "fail?", "noaddr", "handshake"})

    @staticmethod
    def parse(line: str) -> ClusterNodeView:
        node_id, address, flags, primary, _ping, _pong, _epoch, link, *slots = line.split()
        host_port = address.split("@")[0]  # ip:port@cport[,hostname]
        ranges = []
        for token in slots:
            if token.startswith("["):  # a slot being imported or migrated
                continue
            first, _, last = token.partition("-")
            ranges.append((int(first), int(last or first)))
        return ClusterNodeView(
            node_id=node_id,
            port=int(host_port.rpartition(":")[2]),
            flags=frozenset(flags.split(",")),
            primary_id=None if primary == "-" else primary,
            connected=link == "connected",
            slots=tuple(ranges),
        )


def cluster_view(endpoint: Endpoint, *, timeout: float = COMMAND_TIMEOUT_S) -> list[ClusterNodeView]:
    """CLUSTER NODES as `endpoint` sees the cluster."""
    reply = redis_command(endpoint.host, endpoint.port, "CLUSTER", "NODES", timeout=timeout) or b""
    return [ClusterNodeView.parse(line) for line in reply.decode().splitlines() if line.strip()]


@dataclass
class ClusterTopology:
    """What :func:`redis_cluster` yields: every node, and controls over them.

    The queries (:meth:`primaries`, :meth:`primary_of_slot`, ...) ask the first node that is
    neither killed nor frozen and answers.
    """

    nodes: list[Endpoint]
    node_timeout_ms: int
    controls: _Controls = field(default_factory=_Controls)
    _served: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)

    def kill(self, endpoint: Endpoint) -> None:
        self._remember_slots(endpoint)
        self.controls.kill(endpoint)

    def freeze(self, endpoint: Endpoint) -> None:
        self._remember_slots(endpoint)
        self.controls.freeze(endpoint)

    def thaw(self, endpoint: Endpoint) -> None:
        self.controls.thaw(endpoint)

    def node_at(self, port: int) -> Endpoint:
        for node in self.nodes:
            if node.port == port:
                return node
        raise LookupError(f"no node of this cluster listens on port {port}")

    def view(self, *, exclude: Endpoint | None = None) -> tuple[Endpoint, list[ClusterNodeView]]:
        """A live node other than `exclude` and its CLUSTER NODES."""
        errors = []
        for node in self.nodes:
            if node == exclude or not self.controls.is_up(node):
                continue
            try:
                return node, cluster_view(node)
            except _PROBLEMS as error:
                errors.append(f"{node.port}: {error!r}")
        raise RuntimeError(f"no live node answers CLUSTER NODES: {errors}")

    def primaries(self) -> list[Endpoint]:
        """The primaries serving slots and not flagged failing, by their first slot."""
        _, views = self.view()
        serving = sorted((v.slots[0], v.port) for v in views if v.is_primary and v.slots and not v.failed)
        return [self.node_at(port) for _, port in serving]

    def replicas_of(self, primary: Endpoint) -> list[Endpoint]:
        """The nodes replicating `primary` (as a live node sees it)."""
        _, views = self.view()
        ids = {v.port: v.node_id for v in views}
        return [self.node_at(v.port) for v in views if v.primary_id == ids[primary.port] and not v.failed]

    def primary_of_slot(self, slot: int) -> Endpoint:
        """The primary serving `slot` (redis-py: ``RedisCluster.keyslot(key)``)."""
        _, views = self.view()
        return self.node_at(_owner(views, slot).port)

    def cluster_state(self, endpoint: Endpoint) -> str:
        """``cluster_state`` of CLUSTER INFO on `endpoint`: ``ok`` or ``fail``."""
        return info(endpoint, "cluster-info").get("cluster_state", "?")

    def _remember_slots(self, endpoint: Endpoint) -> None:
        with suppress(*_PROBLEMS):
            _, views = self.view(exclude=endpoint)
            mine = [v for v in views if v.port == endpoint.port and v.is_primary]
            if mine and mine[0].slots:
                self._served[endpoint.port] = mine[0].slots

    def wait_for_failover(self, old: Endpoint, timeout_s: float) -> Endpoint:
        """The node now serving the slots `old` served (when it was killed or frozen, else now),
        once every live node other than `old` (neither killed nor frozen) sees one primary
        other than `old` serving them all and reports ``cluster_state:ok``, and that primary
        answers ROLE ``master``. (The node that first sees the failover reports it a few
        hundred milliseconds before the last one does: the news travels by gossip.)

        Raises TimeoutError after `timeout_s`; ValueError if `old` served no slots.
        """
        ranges = self._served.get(old.port)
        if ranges is None:
            _, views = self.view(exclude=old)
            ranges = next((v.slots for v in views if v.port == old.port and v.is_primary), ())
        if not ranges:
            raise ValueError(f"{old.port} served no slots: no failover to wait for")
        witnesses = [node for node in self.nodes if node != old and self.controls.is_up(node)]

        def failed_over() -> Endpoint | None:
            owners = set()
            for witness in witnesses:
                views = cluster_view(witness)
                owners |= {_owner(views, slot).port for first, last in ranges for slot in (first, last)}
                if len(owners) != 1 or old.port in owners or self.cluster_state(witness) != "ok":
                    return None
            new = self.node_at(owners.pop())
            return new if role(new) == "master" else None

        what = f"slots {list(ranges)} of {old.port} served by another primary"
        return _wait_until(what, failed_over, timeout_s, self.diagnose)

    def diagnose(self) -> str:
        """Each live node's cluster_state and the CLUSTER NODES of one of them, plus logs."""
        lines = []
        for node in self.nodes:
            if not self.controls.is_up(node):
                lines.append(f"{node.port}: killed or frozen")
                continue
            try:
                lines.append(f"{node.port}: cluster_state:{self.cluster_state(node)}")
            except _PROBLEMS as error:
                lines.append(f"{node.port}: {error!r}")
        with suppress(*_PROBLEMS):
            witness, views = self.view()
            lines.append(f"CLUSTER NODES as {witness.port} sees it:")
            lines.extend(f"  {v}" for v in views)
        return "\n".join([*lines, *(_logs(node) for node in self.nodes)])


def _key_in_slot(slot: int) -> str:
    """A key CRC16 puts in `slot` (a hash tag found by trying)."""
    for n in range(1_000_000):
        key = f"redis-topologies:{{{n}}}"
        if key_slot(key.encode()) == slot:
            return key
    raise LookupError(f"no key found for slot {slot}")


def _owner(views: Sequence[ClusterNodeView], slot: int) -> ClusterNodeView:
    for view in views:
        if view.is_primary and any(first <= slot <= last for first, last in view.slots):
            return view
    raise LookupError(f"no primary serves slot {slot}")


@contextmanager
def redis_cluster(
    primaries: int = 3,
    replicas_per_primary: int = 1,
    node_timeout_ms: int = 1000,
    *,
    appendonly: bool = False,
) -> Iterator[ClusterTopology]:
    """Start a Redis Cluster: ``primaries * (1 + replicas_per_primary)`` nodes, one container each.

    Host networking, 127.0.0.1, free ports at most 55535 whose bus port (port + 10000) is free
    too; ``--cluster-node-timeout node_timeout_ms``, ``--save ''``, no AOF unless `appendonly`.
    The cluster is formed by ``redis-cli --cluster create ... --cluster-replicas N --cluster-yes``
    run in the first node's container (the host may have no redis-cli), bounded by
    CLUSTER_CREATE_TIMEOUT_S. Killing or freezing a primary gets its replica promoted within
    about ``2-3 * node_timeout_ms`` (failure detection, then the replica's election).

    Yields once every node reports ``cluster_state:ok`` and knows every node, every node's
    CLUSTER NODES agrees on who replicates whom, every replica's link to its primary is up and
    a write on each primary reaches its replicas (then is deleted: the cluster starts empty); each
    container start is bounded by STARTUP_TIMEOUT_S, that readiness by READY_TIMEOUT_S.
    Leaving the context removes every container (killed and paused ones too).
    """
    require_docker()
    if primaries < 3:
        raise ValueError("Redis Cluster needs at least 3 primaries")
    count = primaries * (1 + replicas_per_primary)
    ports = loopback_ports(count, bus_offset=CLUSTER_BUS_OFFSET)
    with ExitStack() as stack:
        nodes = []
        for port in ports:
            enabled = ("--cluster-enabled", "yes", "--cluster-config-file", f"nodes-{port}.conf")
            timeout = ("--cluster-node-timeout", str(node_timeout_ms))
            nodes.append(_start(stack, _node_command(port, appendonly, *enabled, *timeout), port))
        topology = ClusterTopology(nodes, node_timeout_ms)

        create = ["timeout", str(CLUSTER_CREATE_TIMEOUT_S), "redis-cli", "--cluster", "create"]
        create += [f"{HOST}:{port}" for port in ports]
        create += ["--cluster-replicas", str(replicas_per_primary), "--cluster-yes"]
        exit_code, output = nodes[0].container.exec(create)
        if exit_code != 0:
            raise RuntimeError(
                f"redis-cli --cluster create exited {exit_code}:\n{output.decode(errors='replace')}"
            )

        def ready() -> bool:
            shapes = set()
            for node in nodes:
                cluster = info(node, "cluster-info")
                if cluster.get("cluster_state") != "ok" or cluster.get("cluster_known_nodes") != str(count):
                    return False
                views = cluster_view(node)
                if any(v.failed or not v.connected for v in views):
                    return False
                ids = {v.node_id: v.port for v in views}
                shapes.add(frozenset((v.port, ids.get(v.primary_id or "")) for v in views))
            if len(shapes) != 1:
                return False
            shape = shapes.pop()
            replicas = [topology.node_at(port) for port, primary in shape if primary is not None]
            if len(replicas) != primaries * replicas_per_primary:
                return False
            if any(info(replica, "replication").get("master_link_status") != "up" for replica in replicas):
                return False
            for primary in {primary for _, primary in shape if primary is not None}:
                views = [v for v in cluster_view(nodes[0]) if v.port == primary]
                probe = _key_in_slot(views[0].slots[0][0])
                if not _replication_flows(topology.node_at(primary), replicas_per_primary, probe):
                    return False
            return True

        _wait_until("the cluster ready", ready, READY_TIMEOUT_S, topology.diagnose)
        yield topology
