"""What counts as a Redis fault, on a real redis-py client over a real (uvloop) socket.

A connection the server's side reset while it sat in the pool made the next
write raise uvloop's bare ``RuntimeError``: the store let it through as a 500;
then, taken for a fault, a 503 for each connection the pool kept (19 of 100 PUTs
right after a Redis restart). Now a connection whose peer is gone is opened
afresh before a command is sent on it, and a command found unsent is sent again
once; one that went out is never sent twice. Here a stand-in server answers
``+OK`` to every command, counts them, and resets or drops its connections on
demand; no Redis is needed.
"""

from __future__ import annotations

import asyncio
import socket
import struct
from collections import Counter
from typing import cast

import pytest
import redis.asyncio as redis
import uvloop
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from returns.result import Success

from influencer_stats.domain.models import CollectionId, VideoId
from influencer_stats.interpreters.collections.redis_store import RedisCollectionStore
from influencer_stats.interpreters.redis_faults import (
    RaisesClosedTransport,
    UnsentCommand,
    blocking_pool,
    closed_transport,
    retry_unsent,
)
from influencer_stats.interpreters.redis_keys import RedisKeys
from tests.unit.http_api_support import assert_problem, service

CLOSED = (
    "unable to perform operation on <TCPTransport closed=True reading=False 0x7f3a2c1b9e40>; "
    "the handler is closed"
)
VIDEOS = (VideoId("-4lB5EKS5Uk"),)


class OkServer:
    """Just enough of a Redis server for redis-py to connect and write: ``+OK`` to every command,
    each counted by name (``commands``); ``drop``: the next command of that name is read, then its
    connection closed unanswered (it may have run, as far as the client can tell)."""

    def __init__(self) -> None:
        self.writers: list[asyncio.StreamWriter] = []
        self.commands: Counter[str] = Counter()
        self.connections = 0
        self.drop: str | None = None

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        self.connections += 1
        for _ in range(1_000):  # commands on one connection, far more than a test sends
            head = await reader.readline()  # *<arguments>, then $<size> and the bytes of each
            if not head:
                return
            arguments = []
            for _ in range(int(head[1:])):
                size = int((await reader.readline())[1:])
                arguments.append((await reader.readexactly(size + 2))[:-2])
            name = arguments[0].decode().upper()
            self.commands[name] += 1
            if name == self.drop:
                self.drop = None
                writer.close()
                return
            writer.write(b"+OK\r\n")

    def close(self) -> None:
        """Close the connections still open (the test is over)."""
        for writer in self.writers:
            writer.close()

    async def reset(self) -> None:
        """Reset every connection (linger 0: an RST, not a FIN), and let the client's loop see it."""
        for writer in self.writers:
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
        self.writers.clear()
        await asyncio.sleep(0.1)


async def _client(server: asyncio.Server, retry: Retry, socket_timeout: float | None = 1.0) -> redis.Redis:
    port = server.sockets[0].getsockname()[1]
    pool = blocking_pool(
        f"redis://127.0.0.1:{port}/0",
        retry=retry,
        max_connections=4,
        timeout=1.0,
        socket_timeout=socket_timeout,
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


async def test_the_retry_policy_sends_again_once_only_a_command_that_was_not_sent() -> None:
    calls: list[int] = []

    async def failing(error: Exception) -> None:
        calls.append(1)
        raise error

    async def fail(error: Exception) -> None:
        return None

    for error, attempts in (
        (UnsentCommand("x"), 2),
        (redis.ConnectionError("x"), 1),
        (redis.TimeoutError(), 1),
    ):
        calls.clear()
        with pytest.raises(type(error)):
            await retry_unsent().call_with_retry(lambda e=error: failing(e), fail)  # type: ignore[misc]
        assert len(calls) == attempts, error


def test_a_command_on_a_connection_reset_in_the_pool_goes_out_on_a_fresh_one() -> None:
    async def scenario() -> None:
        fake = OkServer()
        async with await asyncio.start_server(fake.serve, "127.0.0.1", 0) as server:
            client = await _client(server, Retry(NoBackoff(), 0))  # no retry: replaced before sending
            store = RedisCollectionStore(client, RedisKeys("t"), wait_replicas=0, wait_ms=250)
            try:
                assert await client.set("warm", "1")
                await fake.reset()
                assert await client.set("k", "v")
                assert fake.connections == 2

                await fake.reset()
                assert isinstance(await store.save(CollectionId("c"), VIDEOS), Success)

                await fake.reset()
                reply = await service(store=store).put("c", {"videos": list(VIDEOS)})
                assert reply.status in (200, 201)
                assert fake.connections == 4
            finally:
                await client.aclose(close_connection_pool=True)
                fake.close()

    uvloop.run(scenario())


@pytest.mark.parametrize("socket_timeout", [1.0, None])
def test_a_command_whose_connection_is_found_closed_as_it_is_written_is_sent_once_on_a_fresh_one(
    monkeypatch: pytest.MonkeyPatch, socket_timeout: float | None
) -> None:
    # The reset not yet seen when the connection is taken (the race the check before sending
    # cannot close): the write finds the transport closed, so nothing went out.
    monkeypatch.setattr(RaisesClosedTransport, "_peer_gone", lambda self: False)

    async def scenario() -> None:
        fake = OkServer()
        async with await asyncio.start_server(fake.serve, "127.0.0.1", 0) as server:
            bare = await _client(server, Retry(NoBackoff(), 0), socket_timeout)
            client = await _client(server, retry_unsent(), socket_timeout)
            try:
                assert await bare.set("warm", "1")
                assert await client.set("warm", "1")
                await fake.reset()
                with pytest.raises(UnsentCommand) as raised:
                    await bare.incr("counter")
                if socket_timeout is None:  # written at once: uvloop's own error, chained
                    cause = raised.value.__cause__
                    assert cause is not None and closed_transport(cause)
                assert fake.commands["INCRBY"] == 0

                assert await client.incr("counter")
                assert fake.commands["INCRBY"] == 1
            finally:
                await bare.aclose(close_connection_pool=True)
                await client.aclose(close_connection_pool=True)
                fake.close()

    uvloop.run(scenario())


def test_a_command_that_went_out_is_never_sent_again_and_the_store_answers_503() -> None:
    async def scenario() -> None:
        fake = OkServer()
        async with await asyncio.start_server(fake.serve, "127.0.0.1", 0) as server:
            client = await _client(server, retry_unsent())
            store = RedisCollectionStore(client, RedisKeys("t"), wait_replicas=0, wait_ms=250)
            try:
                assert await client.set("warm", "1")
                fake.drop = "INCRBY"  # redis-py's incr
                with pytest.raises(redis.ConnectionError):
                    await client.incr("counter")
                assert fake.commands["INCRBY"] == 1

                fake.drop = "EVAL"
                reply = await service(store=store).put("c", {"videos": list(VIDEOS)})
                problem = assert_problem(reply, 503)
                assert problem["type"] == "urn:influencer-stats:problem:store-unavailable"
                assert fake.commands["EVAL"] == 1  # the script that may have run, not sent again
            finally:
                await client.aclose(close_connection_pool=True)
                fake.close()

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
