"""One Redis container per test process, for factories that cannot take fixtures.

The contract suites' factories (``STORES``, ``QUERIES``) are plain callables:
they share this container, started on first use and removed when the process
exits, and keep apart by key prefix.
"""

from __future__ import annotations

import atexit
import functools
import uuid
from contextlib import ExitStack

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.connection import AbstractConnection


@functools.cache
def shared_redis_url() -> str:
    """``redis://127.0.0.1:<port>`` of this process's container (skips or fails without Docker)."""
    from tests.containers import redis_server

    stack = ExitStack()
    endpoint = stack.enter_context(redis_server())
    atexit.register(stack.close)
    return endpoint.url


def unique_prefix() -> str:
    """A key prefix no other test uses."""
    return f"t{uuid.uuid4().hex[:12]}"


class _ClosingPool(BlockingConnectionPool):
    async def release(self, connection: AbstractConnection) -> None:
        await connection.disconnect()
        await super().release(connection)


def closing_client(url: str) -> Redis:
    """A client that closes each connection after each command.

    For factories with no teardown: nothing is left open when the test's
    event loop closes (redis-py would warn about it, and warnings are errors).
    """
    return Redis(connection_pool=_ClosingPool.from_url(url, max_connections=64, timeout=5, socket_timeout=5))
