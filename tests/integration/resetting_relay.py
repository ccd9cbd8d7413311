"""A TCP relay in front of a real server that can reset every connection it carries.

A Redis host that crashes, fails over or sits behind a balancer that drops idle flows
resets the connections a client keeps in its pool (an RST, not a FIN). Killing Redis
only does that when unread data happens to be waiting, which no test can time; the
relay does it on demand: ``reset()`` closes each client-side socket with ``SO_LINGER``
0 (the kernel sends an RST) and drops the upstream one. New connections keep working.
"""

from __future__ import annotations

import selectors
import socket
import struct
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Self

_POLL_S = 0.05
#: A reset must be carried out by the pumps within this long.
_RESET_WAIT_S = 5.0


class _Pair:
    """One relayed connection: the client's socket, the upstream one, and a reset request."""

    def __init__(self, client: socket.socket, upstream: socket.socket) -> None:
        self.client = client
        self.upstream = upstream
        self.reset = threading.Event()
        self.closed = threading.Event()


class ResettingRelay:
    """Relays 127.0.0.1:``port`` to ``target`` until the block ends; ``reset()`` resets what it carries."""

    def __init__(self, target: tuple[str, int]) -> None:
        self._target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(_POLL_S)
        self.port: int = self._listener.getsockname()[1]
        self._stop = threading.Event()
        self._pairs: list[_Pair] = []
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> Self:
        self._start(self._accept, "relay-accept")
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(_RESET_WAIT_S)
        self._listener.close()

    def reset(self) -> int:
        """Reset every open relayed connection (an RST to the client); how many there were."""
        with self._lock:
            pairs = [pair for pair in self._pairs if not pair.closed.is_set()]
        for pair in pairs:
            pair.reset.set()
        deadline = time.monotonic() + _RESET_WAIT_S
        for pair in pairs:
            assert pair.closed.wait(max(0.0, deadline - time.monotonic())), "a pump did not reset in time"
        return len(pairs)

    def _start(self, target: Callable[..., None], name: str, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:  # closed
                return
            try:
                upstream = socket.create_connection(self._target, timeout=2)
            except OSError:
                client.close()
                continue
            pair = _Pair(client, upstream)
            with self._lock:
                self._pairs.append(pair)
            self._start(self._pump, "relay-pump", pair)

    def _pump(self, pair: _Pair) -> None:
        """Copy bytes both ways until either side closes, a reset is asked for or the relay stops."""
        peers = {pair.client: pair.upstream, pair.upstream: pair.client}
        with selectors.DefaultSelector() as selector:
            for sock in peers:
                sock.settimeout(2.0)  # a read follows readiness; a write may wait for room, 2 s at most
                selector.register(sock, selectors.EVENT_READ)
            try:
                while not (self._stop.is_set() or pair.reset.is_set()):
                    for key, _ in selector.select(_POLL_S):
                        source: socket.socket = key.fileobj  # type: ignore[assignment]
                        try:
                            data = source.recv(65536)
                            if not data:
                                return
                            peers[source].sendall(data)
                        except OSError:
                            return
                if pair.reset.is_set():
                    # Linger 0: close() sends an RST instead of a FIN.
                    pair.client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            finally:
                selector.close()
                pair.client.close()
                pair.upstream.close()
                pair.closed.set()
