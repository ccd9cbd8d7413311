"""A Redis Sentinel set in containers (tests/redis_topologies.py says how nodes run): a primary,
its replicas and three sentinels, with controls to kill, freeze and thaw them and waits for the
promotion that follows.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field

from tests.containers import (
    Endpoint,
    redis_command,
    require_docker,
)
from tests.redis_topologies import (
    HOST,
    PROBLEMS,
    READY_TIMEOUT_S,
    Controls,
    ask,
    info,
    logs_of,
    loopback_ports,
    node_command,
    replication_flows,
    role,
    start_node,
    wait_until,
)


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
    controls: Controls = field(default_factory=Controls)

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
            with suppress(*PROBLEMS):
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

        return wait_until(
            f"a primary other than {old.port} for {self.master_name!r}", promoted, timeout_s, self.diagnose
        )

    def wait_for_replica_of(self, node: Endpoint, primary: Endpoint, timeout_s: float) -> None:
        """Until `node` is a replica of `primary` with its link up and writes flowing (e.g. a thawed old primary,
        which the sentinels reconfigure). Raises TimeoutError after `timeout_s`."""

        def linked() -> bool:
            replication = info(node, "replication")
            return (
                replication.get("role") == "slave"
                and replication.get("master_port") == str(primary.port)
                and replication.get("master_link_status") == "up"
                # and what the services' writes wait for: a replica acknowledging a write to the
                # primary (the replica's link being up may come a second before it)
                and replication_flows(primary, 1, "failover-probe")
            )

        wait_until(f"{node.port} a replica of {primary.port}", linked, timeout_s, self.diagnose)

    def diagnose(self) -> str:
        """What each sentinel reports, and the nodes' last log lines (for a failing wait)."""
        lines = []
        for sentinel in self.sentinel_endpoints:
            try:
                lines.append(f"sentinel {sentinel.port}: {info(sentinel, 'sentinel').get('master0')}")
            except PROBLEMS as error:
                lines.append(f"sentinel {sentinel.port}: {error!r}")
        return "\n".join([*lines, *(logs_of(node) for node in [*self.nodes, *self.sentinel_endpoints])])


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
        primary = start_node(stack, node_command(primary_port, appendonly), primary_port)
        replica_of = ["--replicaof", HOST, str(primary_port)]
        started = [
            start_node(stack, node_command(port, appendonly, *replica_of), port) for port in replica_ports
        ]
        sentinels = [start_node(stack, _sentinel_command(port, settings), port) for port in sentinel_ports]
        topology = SentinelTopology(primary, started, sentinels, master_name)

        def ready() -> bool:
            if any(info(r, "replication").get("master_link_status") != "up" for r in started):
                return False
            if not replication_flows(primary, replicas, "redis-topologies:probe"):
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

        wait_until("the sentinel set ready", ready, READY_TIMEOUT_S, topology.diagnose)
        yield topology
