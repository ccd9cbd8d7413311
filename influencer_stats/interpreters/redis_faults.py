"""What counts as Redis failing to answer: one definition for every Redis interpreter.

Every Redis interpreter catches ``REDIS_FAULTS`` around its calls and turns them
into its failure value (``StoreUnavailable``, a cache miss, an unreachable
ledger); anything else is a bug and propagates (a logged 500).

One fault arrives as neither of its types. When the server's side resets a
connection that waits in the pool (Redis killed while it had unread input, a
failover, a balancer dropping an idle flow), uvloop closes the transport, but
redis-py still counts the connection as open: its next write gets uvloop's
bare ``RuntimeError("unable to perform operation on <TCPTransport closed=True
...>; the handler is closed")``, which redis-py passes on after disconnecting.
The pools built here (``blocking_pool``) use connections that raise exactly
that error (``closed_transport``) as a ``redis.ConnectionError``, chained to
it, so it is caught as a fault where any other ``RuntimeError`` is not.

Nor does a request pay for a connection that died in the pool (Redis restarted,
failed over, a balancer reset it): before sending, such a connection whose peer
is gone (end of stream read, or its transport closed) is opened afresh, and the
command goes out on the new one. redis-py's own check of a pooled connection
(``ensure_connection``) skips exactly that test while maintenance notifications
are on (its default, ``"auto"``), so without this each connection the pool kept
failed its next command (19 of 100 PUTs answered 503 right after a restart). A
connection found closed at the moment of writing raises ``UnsentCommand``: the
one error after which sending the command again is safe whatever it does (an
``INCR``, a script), since none of it reached Redis; the clients retry exactly
that, once (``retry_unsent``). An error after the command went out (a reset
while waiting for the answer, a timeout) is not retried: it may have run.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Final

import redis.asyncio as redis
from redis.asyncio.connection import AbstractConnection, SSLConnection, UnixDomainSocketConnection, parse_url
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisClusterException

from influencer_stats.domain.models import StoreUnavailable

#: What a Redis call raises when the server cannot answer: redis-py's errors (connection,
#: timeout, LOADING, READONLY, OOM ...), the OS's socket errors, and the Cluster client's
#: own (no node serves a slot while a failover is under way).
REDIS_FAULTS: Final = (redis.RedisError, OSError, RedisClusterException)


def store_unavailable(exc: BaseException) -> StoreUnavailable:
    """A fault as the stores' failure value: its type only, never its text (which may name the server)."""
    return StoreUnavailable(f"redis: {type(exc).__name__}")


def closed_transport(error: BaseException) -> bool:
    """Whether ``error`` is uvloop's refusal to write on a transport that has closed."""
    text = str(error)
    return (
        type(error) is RuntimeError
        and text.startswith("unable to perform operation on <")
        and text.endswith("; the handler is closed")
    )


class UnsentCommand(redis.ConnectionError):
    """The connection was found closed when the command was to be written: none of it was sent."""


def retry_unsent() -> Retry:
    """The clients' retry policy: a command is sent again once, at once, on a fresh connection,
    only when none of it was sent (``UnsentCommand``); every other fault is the caller's answer."""
    return Retry(NoBackoff(), 1, supported_errors=(UnsentCommand,))


@contextmanager
def _closed_transport_as_connection_error() -> Iterator[None]:
    try:
        yield
    except RuntimeError as error:
        if not closed_transport(error):
            raise
        raise UnsentCommand("the connection was closed by the server's side") from error


class RaisesClosedTransport(AbstractConnection):
    """Put first among a connection class's bases: a connection whose peer is gone is opened afresh
    before a command is sent on it, and one found closed as the command is written raises
    ``UnsentCommand`` (a ``redis.ConnectionError``). See the module."""

    async def send_packed_command(
        self, command: bytes | str | Iterable[bytes], check_health: bool = True
    ) -> None:
        if self._peer_gone():
            await self.disconnect(nowait=True)  # ``super()`` connects afresh
        with _closed_transport_as_connection_error():
            await super().send_packed_command(command, check_health)

    async def _send_packed_command(self, command: Iterable[bytes]) -> None:
        # Nothing is awaited between this test and the write: a transport open here takes the bytes.
        if self._writer is not None and self._writer.transport.is_closing():
            raise UnsentCommand("the connection closed before the command was written")
        await super()._send_packed_command(command)

    def _peer_gone(self) -> bool:
        """Whether Redis's side closed this connection: what it sent is read to its end, or its
        transport has closed (a reset). False when not connected."""
        reader, writer = self._reader, self._writer
        if reader is None or writer is None:
            return False
        return reader.at_eof() or writer.transport.is_closing()


class _TcpConnection(RaisesClosedTransport, redis.Connection):
    pass


class _TlsConnection(RaisesClosedTransport, SSLConnection):
    pass


class _UnixConnection(RaisesClosedTransport, UnixDomainSocketConnection):
    pass


#: The connection class redis-py picks for a URL's scheme, and ours for it.
_CONNECTIONS: Final[dict[type[AbstractConnection], type[AbstractConnection]]] = {
    redis.Connection: _TcpConnection,
    SSLConnection: _TlsConnection,
    UnixDomainSocketConnection: _UnixConnection,
}


def ours(connection_class: type[AbstractConnection]) -> type[AbstractConnection]:
    """The connection class built here in place of redis-py's ``connection_class`` (a Cluster's nodes)."""
    return _CONNECTIONS.get(connection_class, connection_class)


def blocking_pool(url: str, **options: Any) -> redis.BlockingConnectionPool:
    """``redis.BlockingConnectionPool.from_url(url, **options)``, its connections raising a
    closed transport as ``redis.ConnectionError`` (see the module)."""
    parsed = parse_url(url)  # as from_url: what the URL says wins over ``options``
    scheme_class = parsed.pop("connection_class", redis.Connection)
    return redis.BlockingConnectionPool(connection_class=_CONNECTIONS[scheme_class], **{**options, **parsed})
