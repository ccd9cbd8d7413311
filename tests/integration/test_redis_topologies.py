"""The Redis topology harness (tests/redis_topologies.py) starts what it says, and its failovers happen.

- Sentinel: a write on the primary is read on the replica; redis-py's Sentinel client finds
  both at the addresses the sentinels announce; killing the primary, and freezing it, each get
  the replica promoted within seconds; a thawed old primary is demoted to a replica.
- Cluster: redis-py's RedisCluster puts each key on the primary of its slot (the others answer
  MOVED); killing a primary gets its replica promoted with the acknowledged keys, and freezing
  another primary gets its replica promoted too.

Real containers: under CI=true a missing Docker engine fails these tests (``require_docker``).
"""

from __future__ import annotations

import importlib
import time
from typing import Any

import pytest
from redis.cluster import RedisCluster

from tests.containers import redis_command
from tests.redis_cluster_nodes import redis_cluster
from tests.redis_sentinel_set import sentinel_set
from tests.redis_topologies import SLOTS, role, set_and_wait

FAILOVER_TIMEOUT_S = 20.0  # observed: 2-3 s for both topologies
DEMOTION_TIMEOUT_S = 30.0  # observed: 10 s (sentinels recheck a replica every 10 s, wait 8 s to reconfigure)

# redis-py's Sentinel has no type hints; importlib keeps mypy --strict quiet (as tests/containers.py does).
Sentinel: Any = importlib.import_module("redis.sentinel").Sentinel

pytestmark = pytest.mark.timeout(180)


def test_sentinel_set_replicates_and_promotes_the_replica_when_the_primary_is_killed() -> None:
    with sentinel_set() as topology:
        primary, replica = topology.primary, topology.replica
        assert topology.current_primary() == primary
        assert (role(primary), role(replica)) == ("master", "slave")

        assert set_and_wait(primary, "greeting", "hello") == 1  # the replica acknowledged it
        assert redis_command(replica.host, replica.port, "GET", "greeting") == b"hello"
        with pytest.raises(RuntimeError, match="READONLY"):
            redis_command(replica.host, replica.port, "SET", "greeting", "bye")

        # A client reaches the nodes at the addresses the sentinels announce.
        sentinel = Sentinel(topology.sentinels, socket_timeout=1)
        try:
            assert sentinel.discover_master(topology.master_name) == (primary.host, primary.port)
            assert sentinel.discover_slaves(topology.master_name) == [(replica.host, replica.port)]
        finally:
            for connection in sentinel.sentinels:
                connection.close()

        started = time.monotonic()
        topology.kill(primary)
        promoted = topology.wait_for_promotion(primary, FAILOVER_TIMEOUT_S)
        took = time.monotonic() - started

        assert promoted == replica == topology.current_primary()
        assert took >= 1.0  # the sentinels waited down-after-milliseconds before acting
        assert redis_command(promoted.host, promoted.port, "GET", "greeting") == b"hello"
        assert redis_command(promoted.host, promoted.port, "SET", "greeting", "bye") == b"OK"


def test_sentinel_set_promotes_the_replica_when_the_primary_is_frozen_and_demotes_it_when_thawed() -> None:
    with sentinel_set() as topology:
        primary, replica = topology.primary, topology.replica
        topology.freeze(primary)
        # Frozen: the kernel still accepts the connection, nothing answers.
        with pytest.raises(TimeoutError):
            redis_command(primary.host, primary.port, "PING", timeout=0.5)

        promoted = topology.wait_for_promotion(primary, FAILOVER_TIMEOUT_S)
        assert promoted == replica

        topology.thaw(primary)
        topology.wait_for_replica_of(primary, promoted, DEMOTION_TIMEOUT_S)  # no second primary stays
        assert topology.current_primary() == replica
        assert set_and_wait(promoted, "after", "thaw") == 1
        assert redis_command(primary.host, primary.port, "GET", "after") == b"thaw"


def test_cluster_puts_keys_on_their_slot_primary_and_promotes_replicas_of_killed_and_frozen_primaries() -> (
    None
):
    with redis_cluster() as cluster:
        primaries = cluster.primaries()
        assert len(cluster.nodes) == 6 and len(primaries) == 3
        assert all(len(cluster.replicas_of(primary)) == 1 for primary in primaries)
        assert [cluster.primary_of_slot(slot) for slot in (0, SLOTS - 1)] == [primaries[0], primaries[-1]]

        keys = {f"user:{n}": f"value-{n}" for n in range(30)}
        seed = cluster.nodes[-1]
        with RedisCluster(host=seed.host, port=seed.port, socket_timeout=2) as client:
            for key, value in keys.items():
                assert client.set(key, value)
            slots = {key: client.keyslot(key) for key in keys}
        owners = {key: cluster.primary_of_slot(slot) for key, slot in slots.items()}
        assert set(owners.values()) == set(primaries)  # 30 keys land on every primary

        for key, owner in owners.items():
            assert redis_command(owner.host, owner.port, "GET", key) == keys[key].encode()
            other = next(p for p in primaries if p != owner)
            with pytest.raises(RuntimeError, match=rf"^MOVED {slots[key]} 127\.0\.0\.1:{owner.port}$"):
                redis_command(other.host, other.port, "GET", key)

        victim = owners["user:0"]
        (heir,) = cluster.replicas_of(victim)
        # Replication keeps order: once the replica has this write, it has every key before it.
        assert set_and_wait(victim, "user:0", keys["user:0"]) == 1
        cluster.kill(victim)
        assert cluster.wait_for_failover(victim, FAILOVER_TIMEOUT_S) == heir
        assert cluster.primary_of_slot(slots["user:0"]) == heir
        assert all(cluster.cluster_state(node) == "ok" for node in cluster.nodes if node != victim)

        with RedisCluster(host=heir.host, port=heir.port, socket_timeout=2) as client:
            assert {key: client.get(key) for key in keys} == {
                key: value.encode() for key, value in keys.items()
            }

        frozen = next(p for p in primaries if p != victim)
        (frozen_heir,) = cluster.replicas_of(frozen)
        cluster.freeze(frozen)
        assert cluster.wait_for_failover(frozen, FAILOVER_TIMEOUT_S) == frozen_heir
        assert sorted(p.port for p in cluster.primaries()) == sorted(
            p.port for p in (heir, frozen_heir, *(p for p in primaries if p not in (victim, frozen)))
        )
