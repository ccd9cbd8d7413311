"""A Redis Cluster in containers (tests/redis_topologies.py says how nodes run), with controls to
kill, freeze and thaw its nodes and a wait for the failover that follows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field

from redis.crc import key_slot

from tests.containers import (
    Endpoint,
    redis_command,
    require_docker,
)
from tests.redis_topologies import (
    CLUSTER_BUS_OFFSET,
    CLUSTER_CREATE_TIMEOUT_S,
    COMMAND_TIMEOUT_S,
    HOST,
    PROBLEMS,
    READY_TIMEOUT_S,
    Controls,
    info,
    logs_of,
    loopback_ports,
    node_command,
    replication_flows,
    role,
    start_node,
    wait_until,
)


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
    controls: Controls = field(default_factory=Controls)
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
            except PROBLEMS as error:
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
        with suppress(*PROBLEMS):
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
        return wait_until(what, failed_over, timeout_s, self.diagnose)

    def diagnose(self) -> str:
        """Each live node's cluster_state and the CLUSTER NODES of one of them, plus logs."""
        lines = []
        for node in self.nodes:
            if not self.controls.is_up(node):
                lines.append(f"{node.port}: killed or frozen")
                continue
            try:
                lines.append(f"{node.port}: cluster_state:{self.cluster_state(node)}")
            except PROBLEMS as error:
                lines.append(f"{node.port}: {error!r}")
        with suppress(*PROBLEMS):
            witness, views = self.view()
            lines.append(f"CLUSTER NODES as {witness.port} sees it:")
            lines.extend(f"  {v}" for v in views)
        return "\n".join([*lines, *(logs_of(node) for node in self.nodes)])


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
            nodes.append(start_node(stack, node_command(port, appendonly, *enabled, *timeout), port))
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
                if not replication_flows(topology.node_at(primary), replicas_per_primary, probe):
                    return False
            return True

        wait_until("the cluster ready", ready, READY_TIMEOUT_S, topology.diagnose)
        yield topology
