"""The ``distributed`` profile through a Redis failover, under load from two service processes.

A Sentinel set (a primary, two replicas, three sentinels) and a Cluster (three
shards of a primary and two replicas), real ``redis-server`` containers
(tests/redis_topologies.py). Two services write through them without pause,
with writes acknowledged only once a replica has them
(``INFLUENCER_STATS_REDIS_WAIT_REPLICAS=1``); then the primary (of one shard)
is killed, or frozen. What must hold:

- every answer is a success or a ``503`` problem (a read of a collection whose
  write was a 503 may be a 404): never a 500, never a hang;
- the 503s fall inside the *promotion window*: from the outage until the
  topology takes durable writes again (a replica promoted, and a replica of it
  linked, as the sentinels or the Cluster reconfigure it), plus the time the
  service needs to notice (a call's timeout, a rediscovery);
- the services recover by themselves: the same processes answer every
  request after it;
- no acknowledged write is lost: every collection a PUT was answered 200/201
  for is read back, from both services, with exactly its videos, and listed.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from influencer_stats.interpreters.redis_topology import close, sentinel
from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from tests.containers import Endpoint, redis_command
from tests.redis_cluster_nodes import ClusterTopology, redis_cluster
from tests.redis_sentinel_set import SentinelTopology, sentinel_set
from tests.support import RunningService, expected_stats, profile_args, running_service

#: The profile, with fake videos and durable writes (a replica must have each write).
PROFILE = profile_args("distributed")
DURABLE = {"INFLUENCER_STATS_VIDEO_CLIENT": "fake", "INFLUENCER_STATS_REDIS_WAIT_REPLICAS": "1"}
#: How long after the topology is whole again a 503 may still come: a call in flight when it
#: became whole times out (0.5 s), the pool or the slot map is asked again, the near-cache reconnects.
NOTICE_S = 2.0
#: Load before the outage and after recovery; the whole run is bounded by LOAD_CAP_S.
BEFORE_S, AFTER_S, LOAD_CAP_S = 1.0, 2.0, 60.0
FAILOVER_TIMEOUT_S = 30.0


@dataclass
class Answer:
    at: float
    method: str
    collection: str
    status: int


@dataclass
class Load:
    """Writes and reads through two services, one request at a time each, in a thread of its own."""

    services: list[RunningService]
    answers: list[Answer] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    failure: BaseException | None = None

    def run(self) -> None:
        try:
            with httpx.Client(timeout=10) as http:
                started, n = time.monotonic(), 0
                while not self.stop.is_set() and time.monotonic() - started < LOAD_CAP_S:
                    n += 1
                    service = self.services[n % 2]
                    collection = f"f{n}"
                    put = http.put(f"{service.url}/collections/{collection}", json={"videos": videos(n)})
                    self.answers.append(Answer(time.monotonic(), "PUT", collection, put.status_code))
                    read = http.get(f"{self.services[(n + 1) % 2].url}/collections/{collection}/stats")
                    self.answers.append(Answer(time.monotonic(), "GET", collection, read.status_code))
                    if put.status_code in (200, 201) and read.status_code == 200:
                        assert read.json() == expected_stats(videos(n)), collection  # read-your-writes
        except BaseException as error:  # noqa: BLE001 - reported by the test thread
            self.failure = error

    def acknowledged(self) -> dict[str, list[str]]:
        return {
            a.collection: videos(int(a.collection[1:]))
            for a in self.answers
            if a.method == "PUT" and a.status in (200, 201)
        }


def videos(n: int) -> list[str]:
    return [synthetic_video_id(n * 10 + k) for k in range(1 + n % 3)]


@contextmanager
def loaded(services: list[RunningService]) -> Iterator[Load]:
    load = Load(services)
    thread = threading.Thread(target=load.run, name="failover-load")
    thread.start()
    try:
        yield load
    finally:
        load.stop.set()
        thread.join(timeout=LOAD_CAP_S)
    assert not thread.is_alive()
    if load.failure is not None:
        raise load.failure


@contextmanager
def two_services(tmp_path: Path, env: dict[str, str]) -> Iterator[list[RunningService]]:
    with ExitStack() as stack:
        yield [
            stack.enter_context(running_service(PROFILE, tmp_path / f"{name}.log", env={**DURABLE, **env}))
            for name in ("a", "b")
        ]


def outage(topology: SentinelTopology | ClusterTopology, node: Endpoint, how: str) -> None:
    (topology.kill if how == "killed" else topology.freeze)(node)


def through_failover(
    services: list[RunningService], strike: Callable[[], None], whole_again: Callable[[], None]
) -> tuple[Load, float, float]:
    """Load through ``strike()`` until ``whole_again()`` returns and AFTER_S more: the load, when
    the outage began and when the topology was whole again (monotonic seconds)."""
    with loaded(services) as load:
        time.sleep(BEFORE_S)  # load before the outage
        struck = time.monotonic()
        strike()
        whole_again()
        whole = time.monotonic()
        time.sleep(NOTICE_S + AFTER_S)
    return load, struck, whole


def assert_failed_over_cleanly(
    load: Load, struck: float, whole: float, services: list[RunningService], http: httpx.Client
) -> None:
    statuses = {a.status for a in load.answers}
    assert statuses <= {200, 201, 404, 503}, statuses
    unwritten = {a.collection for a in load.answers if a.method == "PUT" and a.status == 503}
    assert all(a.collection in unwritten for a in load.answers if a.status == 404)  # never written
    unavailable = [a for a in load.answers if a.status == 503]
    assert all(struck <= a.at <= whole + NOTICE_S for a in unavailable), (
        [round(a.at - struck, 2) for a in unavailable],
        round(whole - struck, 2),
    )
    before = [a for a in load.answers if a.at < struck]
    after = [a for a in load.answers if a.at > whole + NOTICE_S]
    assert len(before) >= 10 and len(after) >= 10, (len(before), len(after))
    assert all(s.process.poll() is None for s in services)  # the same processes: no restart

    written = load.acknowledged()
    assert len(written) >= 20
    for service in services:
        assert http.get(f"{service.url}/readyz").json()["checks"]["redis-replicas"] == "ok"
        for collection, expected in written.items():
            assert http.get(f"{service.url}/collections/{collection}").json() == {"videos": expected}
        assert set(written) <= listed_ids(http, service.url)


def listed_ids(http: httpx.Client, url: str) -> set[str]:
    """Every id ``GET /collections`` lists, page after page (a fast load writes over 1,000)."""
    ids: set[str] = set()
    params = {"limit": "1000"}
    for _ in range(100):  # bounded: 100,000 ids, far more than any load here writes
        page = http.get(f"{url}/collections", params=params).json()
        ids.update(page["ids"])
        if "next" not in page:
            return ids
        params = {"limit": "1000", "cursor": page["next"]}
    raise AssertionError("more than 100 pages of ids")


@pytest.mark.parametrize("how", ["killed", "frozen"])
def test_sentinel_a_failed_primary_costs_503s_only_until_a_replica_is_promoted_and_no_acknowledged_write(
    how: str, tmp_path: Path
) -> None:
    with sentinel_set(replicas=2) as topology:
        env = {
            "REDIS_URL": "redis://127.0.0.1:6379/0",  # only its database (and credentials) count
            "INFLUENCER_STATS_REDIS_SENTINELS": ",".join(f"{h}:{p}" for h, p in topology.sentinels),
            "INFLUENCER_STATS_REDIS_MASTER": topology.master_name,
        }
        old = topology.primary
        with two_services(tmp_path, env) as services, httpx.Client(timeout=10) as http:

            def whole_again() -> None:
                new = topology.wait_for_promotion(old, FAILOVER_TIMEOUT_S)
                other = next(r for r in topology.replicas if r != new)
                topology.wait_for_replica_of(other, new, FAILOVER_TIMEOUT_S)

            load, struck, whole = through_failover(services, lambda: outage(topology, old, how), whole_again)
            assert_failed_over_cleanly(load, struck, whole, services, http)


def test_cluster_a_failed_primary_costs_503s_only_until_its_replica_is_promoted_and_no_acknowledged_write(
    tmp_path: Path,
) -> None:
    with redis_cluster(replicas_per_primary=2) as cluster:
        env = {"INFLUENCER_STATS_REDIS_CLUSTER": ",".join(f"{n.host}:{n.port}" for n in cluster.nodes)}
        old = cluster.primaries()[0]
        with two_services(tmp_path, env) as services, httpx.Client(timeout=10) as http:

            def whole_again() -> None:
                new = cluster.wait_for_failover(old, FAILOVER_TIMEOUT_S)
                deadline = time.monotonic() + FAILOVER_TIMEOUT_S
                while not cluster.replicas_of(new) and time.monotonic() < deadline:
                    time.sleep(0.05)  # the shard's other replica follows the new primary
                assert cluster.replicas_of(new), cluster.diagnose()

            load, struck, whole = through_failover(services, lambda: cluster.kill(old), whole_again)
            assert_failed_over_cleanly(load, struck, whole, services, http)


def test_sentinel_more_calls_at_once_than_the_pool_has_connections_wait_their_turn() -> None:
    with sentinel_set() as topology:
        client = sentinel(topology.sentinels, topology.master_name, "redis://", connections=2, timeout_s=2.0)

        async def at_once() -> list[int]:
            try:
                return await asyncio.gather(*(client.incr(f"n{n}") for n in range(50)))
            finally:
                await close(client)

        assert asyncio.run(at_once()) == [1] * 50  # redis-py's own pool: "Too many connections"


def test_sentinel_connections_the_primary_closed_are_opened_afresh_before_the_next_command() -> None:
    with sentinel_set() as topology:
        client = sentinel(topology.sentinels, topology.master_name, "redis://", connections=4, timeout_s=2.0)
        primary = topology.current_primary()

        async def across_a_kill() -> list[int]:
            try:
                assert await asyncio.gather(*(client.incr(f"k{n}") for n in range(8))) == [1] * 8
                kept = list(client.connection_pool._available_connections)
                redis_command(primary.host, primary.port, "CLIENT", "KILL", "TYPE", "normal")
                for _ in range(1_000):  # bounded: until the loop has read each connection's end
                    if all(c._reader is None or c._reader.at_eof() for c in kept):
                        break
                    await asyncio.sleep(0.001)
                return await asyncio.gather(*(client.incr(f"k{n}") for n in range(8)))
            finally:
                await close(client)

        # No call fails: the connections' own check, as redis-py's pool check of a Sentinel pool
        # (which has no maintenance notifications) already did; on one server it did not.
        assert asyncio.run(across_a_kill()) == [2] * 8
