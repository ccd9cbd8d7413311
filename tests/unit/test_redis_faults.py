"""What counts as a Redis fault, on a real redis-py client over a real (uvloop) socket.

A connection the server's side reset while it sat in the pool made the next
write raise uvloop's bare ``RuntimeError``: the store let it through as a 500.
Here a stand-in server answers ``+OK`` to every command and resets its
connections on demand; no Redis is needed.
"""

from __future__ import annotations

import asyncio
import socket
import struct
from typing import cast

import pytest
import redis.asyncio as redis
import uvloop
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from returns.result import Failure

from influencer_stats.domain.models import CollectionId, StoreUnavailable, VideoId
from influencer_stats.interpreters.collections.redis_store import RedisCollectionStore
from influencer_stats.interpreters.redis_faults import blocking_pool, closed_transport
from influencer_stats.interpreters.redis_keys import RedisKeys
from tests.unit.http_api_support import assert_problem, service

CLOSED = (
    "unable to perform operation on <TCPTransport closed=True reading=False 0x7f3a2c1b9e40>; "
    "the handler is closed"
)
VIDEOS = (VideoId("-4lB5EKS5Uk"),)


class OkServer:
    """Just enough of a Redis server for redis-py to connect and write: ``+OK`` to every command."""

    def __init__(self) -> None:
        self.writers: list[asyncio.StreamWriter] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        for _ in range(1_000):  # commands on one connection, far more than a test sends
            head = await reader.readline()  # *<arguments>, then $<size> and the bytes of each
            if not head:
                return
            for _ in range(int(head[1:])):
                size = int((await reader.readline())[1:])
                await reader.readexactly(size + 2)
            writer.write(b"+OK\r\n")

    async def reset(self) -> None:
        """Reset every connection (linger 0: an RST, not a FIN), and let the client's loop see it."""
        for writer in self.writers:
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
        self.writers.clear()
        await asyncio.sleep(0.1)


async def _client(server: asyncio.Server) -> redis.Redis:
    port = server.sockets[0].getsockname()[1]
    pool = blocking_pool(
        f"redis://127.0.0.1:{port}/0",
        retry=Retry(NoBackoff(), 0),
        max_connections=4,
        timeout=1.0,
        socket_timeout=1.0,
        socket_connect_timeout=1.0,
    )
    return redis.Redis(connection_pool=pool)


def test_only_uvloop_s_closed_transport_error_is_a_closed_transport() -> None:
    assert closed_transport(RuntimeError(CLOSED))
    assert closed_transport(RuntimeError(CLOSED.replace("TCPTransport", "UnixTransport")))
    assert not closed_transport(RuntimeError("dictionary changed size during iteration"))
    assert not closed_transport(RuntimeError("unable to perform operation on <Loop>; it is closed"))
    assert not closed_transport(ValueError(CLOSED))

    class SubclassError(RuntimeError):
        pass

    assert not closed_transport(SubclassError(CLOSED))


def test_a_write_on_a_connection_reset_in_the_pool_is_a_connection_error_and_the_store_unavailable() -> None:
    async def scenario() -> None:
        fake = OkServer()
        async with await asyncio.start_server(fake.serve, "127.0.0.1", 0) as server:
            client = await _client(server)
            store = RedisCollectionStore(client, RedisKeys("t"), wait_replicas=0, wait_ms=250)
            try:
                # The client raises exactly uvloop's RuntimeError, as a ConnectionError chained to it.
                assert await client.set("warm", "1")
                await fake.reset()
                with pytest.raises(redis.ConnectionError) as raised:
                    await client.set("k", "v")
                assert isinstance(raised.value.__cause__, RuntimeError)
                assert closed_transport(raised.value.__cause__)

                # The store answers its failure value, and the edge a 503.
                assert await client.set("warm", "1")  # reconnects
                await fake.reset()
                saved = await store.save(CollectionId("c"), VIDEOS)
                assert saved == Failure(StoreUnavailable("redis: ConnectionError"))

                assert await client.set("warm", "1")
                await fake.reset()
                reply = await service(store=store).put("c", {"videos": list(VIDEOS)})
                problem = assert_problem(reply, 503)
                assert problem["type"] == "urn:influencer-stats:problem:store-unavailable"
            finally:
                await client.aclose(close_connection_pool=True)

    uvloop.run(scenario())


class _BuggyClient:
    """A client whose call fails with a ``RuntimeError`` that is a bug, not Redis failing."""

    def register_script(self, script: str) -> None:
        return None

    async def mget(self, *keys: str) -> list[bytes]:
        raise RuntimeError("dictionary changed size during iteration")


async def test_any_other_runtime_error_is_a_logged_500_not_a_store_failure() -> None:
    store = RedisCollectionStore(
        cast(redis.Redis, _BuggyClient()), RedisKeys("t"), wait_replicas=0, wait_ms=250
    )
    svc = service(store=store)

    with pytest.raises(RuntimeError):
        await store.get(CollectionId("c"))
    reply = await svc.get("/collections/c")

    assert_problem(reply, 500)
    assert len(svc.log.named("http.unhandled_error")) == 1
