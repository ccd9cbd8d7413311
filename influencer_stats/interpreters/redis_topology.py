"""The one shared Redis client, for each topology: one server, a Sentinel-watched primary, a Cluster.

Every Redis interpreter takes a ``RedisClient`` and works unchanged on all three:
each multi-key command and script names keys of one hash slot (``RedisKeys``),
and a read over many slots goes through ``read_many``.

- **One server** (``REDIS_URL``): a blocking pool of ``connections`` (a caller waits
  up to ``timeout_s`` for a free one).
- **Sentinel** (``sentinels`` and ``master``): the primary the sentinels name,
  asked again whenever a connection to it fails or it answers READONLY (demoted):
  after a failover the next connection goes to the promoted replica, with no
  restart. Credentials, database and TLS come from ``REDIS_URL``; the sentinels
  themselves are reached without a password.
- **Cluster** (``nodes``): redis-py's cluster client, which learns the slot map
  from any node, follows MOVED/ASK, and re-reads the map when a node fails.
  Its pools do not block (a call finding ``connections`` of a node in use
  fails), so calls and pipelines wait here for one of ``connections`` turns
  instead, up to ``timeout_s`` (``QueuingCluster``). Credentials and TLS come
  from ``REDIS_URL``; a Cluster has one database.

Each call is bounded by ``timeout_s`` (connect, read, write). On every topology a
pooled connection Redis closed (a restart, a failover, a reset) is opened afresh
before a command is sent on it (``redis_faults``). On one server or Sentinel a
call is retried only when none of it was sent (its connection found closed as it
was written: ``redis_faults.retry_unsent``), once, on a fresh connection; any
other fault is the caller's answer (a 503, a cache miss). The Cluster client
retries a call a few times only across a failover of the shard it was sent to
(``CLUSTER_RETRIES``), the only way it learns the new slot map.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final, TypeAlias

import redis.asyncio as redis
from redis.asyncio.cluster import ClusterNode, ClusterPipeline, RedisCluster
from redis.asyncio.connection import SSLConnection, parse_url
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool, SentinelManagedConnection
from redis.backoff import ExponentialBackoff
from redis.typing import EncodableT

from influencer_stats.interpreters.redis_faults import (
    RaisesClosedTransport,
    blocking_pool,
    ours,
    retry_unsent,
)

#: What every Redis interpreter is given: a client of one server (Sentinel's included) or of a Cluster.
RedisClient: TypeAlias = redis.Redis | RedisCluster

#: Attempts of a Cluster call across a failover of its shard, with a backoff from 50 ms to 1 s between.
CLUSTER_RETRIES: Final = 3


def _common(timeout_s: float) -> dict[str, Any]:
    return {
        "retry": retry_unsent(),  # the timeout bounds each call; sent again only if none of it was sent
        "socket_timeout": timeout_s,
        "socket_connect_timeout": timeout_s,
        "health_check_interval": 30,
    }


def standalone(url: str, *, connections: int, timeout_s: float) -> redis.Redis:
    """A client of the one server ``url`` names."""
    pool = blocking_pool(url, max_connections=connections, timeout=timeout_s, **_common(timeout_s))
    return redis.Redis(connection_pool=pool)


class _SentinelConnection(RaisesClosedTransport, SentinelManagedConnection):
    """A connection to the sentinels' primary whose closed transport is a ``ConnectionError``."""


class _SentinelTlsConnection(_SentinelConnection, SSLConnection):
    pass


class _BlockingSentinelPool(SentinelConnectionPool, redis.BlockingConnectionPool):
    """The sentinels' primary's pool, which makes a caller wait for a free connection (up to its
    ``timeout``) as ``standalone``'s does, where redis-py's fails at once."""


def sentinel(
    sentinels: Sequence[tuple[str, int]], master: str, url: str, *, connections: int, timeout_s: float
) -> redis.Redis:
    """A client of the primary the ``sentinels`` name ``master``, followed through failovers."""
    options: dict[str, Any] = dict(parse_url(url))
    options.pop("host", None)
    options.pop("port", None)
    tls = options.pop("connection_class", None) is SSLConnection
    watch = Sentinel(  # type: ignore[no-untyped-call]
        list(sentinels),
        sentinel_kwargs={"socket_timeout": timeout_s, "socket_connect_timeout": timeout_s},
        **_common(timeout_s),
    )
    pool = _BlockingSentinelPool(  # type: ignore[no-untyped-call]
        master,
        watch,
        timeout=timeout_s,  # waiting for a free connection
        connection_class=_SentinelTlsConnection if tls else _SentinelConnection,
        max_connections=connections,
        **{**watch.connection_kwargs, **options},
    )
    return redis.Redis(connection_pool=pool)


class QueuingCluster(RedisCluster):
    """``RedisCluster`` whose calls take one of ``turns`` first, waiting up to ``wait_s`` (then a
    ``redis.TimeoutError``), as a blocking pool would: at most ``turns`` calls are under way, so no
    node's pool of as many connections runs dry (which redis-py answers with an error, not a wait)."""

    def __init__(self, *args: Any, turns: int, wait_s: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Every node's connections are ours (``redis_faults``): one whose peer is gone is opened
        # afresh before a command is sent on it. The nodes learnt later are built from
        # ``connection_kwargs`` (the dict the nodes manager holds too); the startup ones exist.
        self.connection_kwargs["connection_class"] = ours(self.connection_kwargs["connection_class"])
        for node in self.nodes_manager.startup_nodes.values():
            node.connection_class = self.connection_kwargs["connection_class"]
        self._turns = asyncio.Semaphore(turns)
        self._wait_s = wait_s

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """One of the turns, for the length of the block."""
        try:
            async with asyncio.timeout(self._wait_s):
                await self._turns.acquire()
        except TimeoutError:
            raise redis.TimeoutError("no Redis Cluster connection free in time") from None
        try:
            yield
        finally:
            self._turns.release()

    async def execute_command(self, *args: EncodableT, **kwargs: Any) -> Any:
        async with self.turn():
            return await super().execute_command(*args, **kwargs)

    def pipeline(self, transaction: Any | None = None, shard_hint: Any | None = None) -> ClusterPipeline:
        if shard_hint:
            return super().pipeline(transaction, shard_hint)  # refused, as redis-py refuses it
        return _QueuingPipeline(self, transaction)  # type: ignore[abstract]  # as redis-py builds its own


class _QueuingPipeline(ClusterPipeline):
    """A pipeline of a ``QueuingCluster``: its execution takes one turn."""

    cluster_client: QueuingCluster

    async def execute(self, raise_on_error: bool = True, allow_redirections: bool = True) -> list[Any]:
        async with self.cluster_client.turn():
            answers: list[Any] = await super().execute(raise_on_error, allow_redirections)
            return answers


def cluster(
    nodes: Sequence[tuple[str, int]], url: str, *, connections: int, timeout_s: float
) -> RedisCluster:
    """A client of the Cluster any of ``nodes`` belongs to (``connections`` per node)."""
    options: dict[str, Any] = dict(parse_url(url))
    for unused in ("host", "port", "db", "path"):
        options.pop(unused, None)
    if options.pop("connection_class", None) is SSLConnection:
        options["ssl"] = True
    common = _common(timeout_s)
    common["retry"] = Retry(ExponentialBackoff(cap=1.0, base=0.05), CLUSTER_RETRIES)
    return QueuingCluster(
        startup_nodes=[ClusterNode(host, port) for host, port in nodes],
        turns=connections,
        wait_s=timeout_s,
        max_connections=connections,
        **common,
        **options,
    )


async def close(client: RedisClient) -> None:
    """Close ``client``, its pools, and (Sentinel) its connections to the sentinels."""
    if isinstance(client, RedisCluster):
        await client.aclose()
        return
    pool = client.connection_pool
    await client.aclose(close_connection_pool=True)
    if isinstance(pool, SentinelConnectionPool):
        await pool.sentinel_manager.aclose()


async def read_many(client: RedisClient, keys: Sequence[str]) -> list[Any]:
    """The values of ``keys``, None for each missing: one ``MGET`` on one server; on a Cluster,
    one per slot the keys fall in, sent to their shards side by side (not atomic across slots)."""
    if isinstance(client, RedisCluster):
        return await client.mget_nonatomic(keys)
    return await client.mget(keys)


#: A server: host and port, or a Unix socket's path.
Address = tuple[str, int] | str


async def primaries(client: RedisClient) -> list[Address]:
    """Where ``client``'s writes go now: the one server, the primary the sentinels name (asked
    again), or every primary of the Cluster (its slot map read again)."""
    if isinstance(client, RedisCluster):
        await client.initialize()  # once: the slot map and the command table
        await client.nodes_manager.initialize()  # the slot map again: a failover may have moved it
        return [(str(node.host), int(node.port)) for node in client.get_primaries()]
    pool = client.connection_pool
    if isinstance(pool, SentinelConnectionPool):
        host, port = await pool.get_master_address()  # type: ignore[no-untyped-call]
        return [(str(host), int(port))]
    options = pool.connection_kwargs
    if "path" in options:
        return [str(options["path"])]
    return [(str(options.get("host", "localhost")), int(options.get("port", 6379)))]


async def fewest_replicas(client: RedisClient) -> int:
    """How many replicas are online (``INFO replication``) at the primary that has the fewest:
    the one server, the primary the sentinels name, or each primary of the Cluster in turn."""
    if not isinstance(client, RedisCluster):
        return _online(await client.info("replication"))
    await client.initialize()  # once: the slot map
    return min(
        [_online(await client.info("replication", target_nodes=node)) for node in client.get_primaries()],
        default=0,
    )


def _online(replication: dict[str, Any]) -> int:
    """The replicas ``INFO replication`` lists as ``online`` (``slave<n>:ip=…,state=online,…``)."""
    return sum(
        1
        for name, replica in replication.items()
        if name.startswith("slave") and isinstance(replica, dict) and replica.get("state") == "online"
    )


def credentials(url: str) -> list[str]:
    """``AUTH``'s arguments for ``url``: the user (if any) and the password, or none."""
    options = parse_url(url)
    password = options.get("password")
    if not password:
        return []
    username = options.get("username")
    return [str(username), str(password)] if username else [str(password)]
