"""Redis telling this process which keys changed: server-assisted invalidation (``CLIENT TRACKING``).

``KeyTracking`` keeps one connection to every primary that holds the tracked
keys (one server; the primary Sentinel names; each primary of a Cluster). On
each it runs, in RESP2::

    CLIENT ID                                     → n
    CLIENT TRACKING ON REDIRECT n BCAST PREFIX p  (its own invalidations, to itself)
    SUBSCRIBE __redis__:invalidate

after which Redis sends it, as a pub/sub message, every key under ``p`` that
any client changes, or a null when a database is flushed. Those are read
with a plain non-blocking socket, not a redis-py connection, for one reason:
``live()`` reads what has arrived *synchronously* before it answers, so a
request served from memory right after a write on another worker or host
never misses that write's invalidation, which Redis sent before the writer's
acknowledgement left it (the writer's client then still has to hear it and
send the next request here).

A connection is *live* while it answered a ``PING`` within ``lease_s``
(sent every third of it): a primary frozen (SIGSTOP) or cut off stops the
feed within a lease, before Sentinel or the Cluster can promote a replica
that takes writes (their detection takes longer: keep ``lease_s`` below
``down-after-milliseconds`` / ``cluster-node-timeout``). Whenever any
connection is lost or lapses, ``on_flush`` runs (everything learnt may now be
stale), all are closed, and ``run`` connects afresh to the primaries
``servers()`` names then, after ``retry_s``.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable, Sequence
from contextlib import suppress
from typing import Any, Final

import hiredis
from redis.exceptions import RedisClusterException, RedisError

from influencer_stats.algebras import EventLog
from influencer_stats.interpreters.redis_topology import Address

_CHANNEL: Final = b"__redis__:invalidate"
_PING: Final = b"*1\r\n$4\r\nPING\r\n"


#: What finding or reaching a primary raises when it cannot: the OS's socket errors, a timeout,
#: redis-py's errors (asking Sentinel or a Cluster where the primaries are).
_FAULTS: Final = (OSError, TimeoutError, RedisError, RedisClusterException)


class TrackingError(Exception):
    """A tracking connection closed, failed to set up, or lapsed."""


def _command(*parts: str | bytes | int) -> bytes:
    encoded = [p if isinstance(p, bytes) else str(p).encode() for p in parts]
    return b"*%d\r\n" % len(encoded) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in encoded)


class _Tracker:
    """One tracking connection: set up by ``open``, then fed by the loop's reader and ``drain``."""

    def __init__(
        self, sock: socket.socket, clock: Callable[[], float], on_key: Callable[[bytes], None]
    ) -> None:
        self._sock = sock
        self._clock = clock
        self._on_key = on_key
        self._reader = hiredis.Reader()
        self.answered_at = clock()
        self.lost = False
        self.flushed = False  # the server flushed a database: everything may be stale

    @classmethod
    async def open(
        cls,
        address: Address,
        prefix: bytes,
        auth: Sequence[str],
        timeout_s: float,
        clock: Callable[[], float],
        on_key: Callable[[bytes], None],
    ) -> _Tracker:
        loop = asyncio.get_running_loop()
        family = (
            socket.AF_UNIX
            if isinstance(address, str)
            else socket.AF_INET6
            if ":" in address[0]
            else socket.AF_INET
        )
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            async with asyncio.timeout(timeout_s):
                await loop.sock_connect(sock, address)
                tracker = cls(sock, clock, on_key)
                if auth:
                    await tracker._ask(loop, _command("AUTH", *auth))
                client_id = await tracker._ask(loop, _command("CLIENT", "ID"))
                await tracker._ask(
                    loop,
                    _command("CLIENT", "TRACKING", "ON", "REDIRECT", client_id, "BCAST", "PREFIX", prefix),
                )
                await tracker._ask(loop, _command("SUBSCRIBE", _CHANNEL))
        except BaseException:
            sock.close()
            raise
        loop.add_reader(sock, tracker.drain)
        return tracker

    async def _ask(self, loop: asyncio.AbstractEventLoop, command: bytes) -> Any:
        await loop.sock_sendall(self._sock, command)
        while (reply := self._reader.gets()) is False:
            data = await loop.sock_recv(self._sock, 4096)
            if not data:
                raise TrackingError("closed while setting up")
            self._reader.feed(data)
        if isinstance(reply, hiredis.ReplyError):
            raise TrackingError(f"refused: {str(reply)[:80]}")
        return reply

    def drain(self) -> None:
        """Read and act on everything that has arrived, without waiting."""
        while not self.lost:
            try:
                data = self._sock.recv(65_536)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                data = b""
            if not data:
                self.lost = True
                self._unwatch()  # a closed socket stays readable: the loop would call this on every turn
                break
            self._reader.feed(data)
        while (reply := self._reader.gets()) is not False:
            self._act(reply)

    def _act(self, reply: Any) -> None:
        if isinstance(reply, list) and len(reply) == 3 and reply[0] == b"message":
            keys = reply[2]
            if keys is None:
                self.flushed = True
            else:
                for key in keys:
                    self._on_key(key)
        elif isinstance(reply, list) and reply[:1] == [b"pong"]:
            self.answered_at = self._clock()
        elif isinstance(reply, hiredis.ReplyError):
            self.lost = True

    def ping(self) -> None:
        try:
            self._sock.send(_PING)
        except OSError:
            self.lost = True

    def close(self) -> None:
        self._unwatch()
        self._sock.close()

    def _unwatch(self) -> None:
        with suppress(Exception):
            asyncio.get_running_loop().remove_reader(self._sock)


class KeyTracking:
    """Invalidations of the keys under ``prefix`` on every primary ``servers()`` names (see the module).

    ``on_key`` gets each changed key; ``on_flush`` runs when anything may have
    been missed (a connection lost or lapsed, a database flushed). ``live()``
    says whether every connection is up and answered within ``lease_s``, having
    first read whatever they sent. One task runs ``run`` until cancelled.
    """

    def __init__(
        self,
        servers: Callable[[], Awaitable[Sequence[Address]]],
        prefix: str,
        on_key: Callable[[bytes], None],
        on_flush: Callable[[], None],
        *,
        auth: Sequence[str],
        lease_s: float,
        retry_s: float,
        clock: Callable[[], float],
        log: EventLog,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._servers = servers
        self._prefix = prefix.encode()
        self._on_key = on_key
        self._on_flush = on_flush
        self._auth = auth
        self._lease_s = lease_s
        self._retry_s = retry_s
        self._clock = clock
        self._log = log
        self._sleep = sleep
        self._trackers: list[_Tracker] = []

    def live(self) -> bool:
        """Whether every tracked primary is connected and answered within the lease, after
        acting on everything they sent so far."""
        trackers = self._trackers
        if not trackers:
            return False
        now = self._clock()
        for tracker in trackers:
            tracker.drain()
            if tracker.lost or tracker.flushed or now - tracker.answered_at > self._lease_s:
                self._drop("lapsed" if not tracker.lost else "lost")
                return False
        return True

    async def connect(self) -> bool:
        """Connect to every primary ``servers()`` names now; whether that worked (else
        ``run`` tries again)."""
        try:
            servers = await self._servers()
            opened: list[_Tracker] = []
            try:
                for address in servers:
                    opened.append(
                        await _Tracker.open(
                            address, self._prefix, self._auth, self._lease_s, self._clock, self._on_key
                        )
                    )
            except BaseException:
                for tracker in opened:
                    tracker.close()
                raise
        except (*_FAULTS, TrackingError) as exc:
            self._log.warning("stats.tracking_unavailable", error=type(exc).__name__)
            return False
        self._on_flush()  # what was learnt before these connections may have missed writes
        self._trackers = opened
        self._log.info("stats.tracking_started", servers=len(opened))
        return True

    async def run(self) -> None:
        """Until cancelled: ping every third of the lease while live; when not, connect again
        after ``retry_s``."""
        try:
            while True:
                while self.live():
                    for tracker in self._trackers:
                        tracker.ping()
                    await self._sleep(self._lease_s / 3)
                await self._sleep(self._retry_s)
                await self.connect()
        finally:
            self._drop("stopped")

    def close(self) -> None:
        """Close every connection (``run``, cancelled, does this itself)."""
        self._drop("stopped")

    def _drop(self, reason: str) -> None:
        if not self._trackers:
            return
        trackers, self._trackers = self._trackers, []
        for tracker in trackers:
            tracker.close()
        self._on_flush()
        if reason != "stopped":
            self._log.warning("stats.tracking_lost", reason=reason)
