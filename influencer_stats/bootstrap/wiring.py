"""What builders share: the settings, one exit stack, readiness checks, one Redis client.

Builders run in three stages, each seeing what the earlier ones built:
metrics (``Resources``), then the logger (``Observed``: + metrics), then
everything else (``Wiring``: + the log).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO

from influencer_stats.algebras import EventLog, Metrics
from influencer_stats.settings import Settings

if TYPE_CHECKING:
    from redis.asyncio import Redis

#: Readiness checks by dependency name (``/readyz``).
Checks = dict[str, Callable[[], Awaitable[bool]]]


@dataclass(slots=True)
class _Shared:
    redis: Redis | None = None
    stretch: Callable[[], float] | None = None


@dataclass(slots=True)
class Resources:
    """The settings and the process-wide resources every builder may use."""

    settings: Settings
    exits: AsyncExitStack
    checks: Checks
    stdout: BinaryIO
    _shared: _Shared = field(default_factory=_Shared)

    def background(self, coroutine: Awaitable[Any], name: str) -> None:
        """Run ``coroutine`` as a task until the service stops (then cancel it)."""
        task = asyncio.ensure_future(coroutine)
        task.set_name(name)
        self.exits.push_async_callback(_cancel, task)

    async def redis(self) -> Redis:
        """The one shared redis-py client (bounded, blocking pool; a timeout on every call).

        Opened on first use, so a profile without Redis never imports it.
        """
        if self._shared.redis is None:
            self._shared.redis = await _open_redis(self)
        return self._shared.redis

    def stretch(self) -> Callable[[], float]:
        """How much caches should stretch freshness: the quota governor's say, when one was built."""
        return self._shared.stretch or _unstretched

    def govern_freshness(self, stretch: Callable[[], float]) -> None:
        """Called by the quota governor's builder, before the caches above it are built."""
        self._shared.stretch = stretch

    def observed(self, metrics: Metrics) -> Observed:
        """The next stage: these resources plus the metrics."""
        return Observed(self.settings, self.exits, self.checks, self.stdout, self._shared, metrics=metrics)


@dataclass(slots=True)
class Observed(Resources):
    """Resources plus the metrics (what loggers are built with)."""

    metrics: Metrics = field(kw_only=True)

    def wired(self, log: EventLog) -> Wiring:
        """The last stage: these resources, the metrics and the log."""
        return Wiring(
            self.settings, self.exits, self.checks, self.stdout, self._shared, metrics=self.metrics, log=log
        )


@dataclass(slots=True)
class Wiring(Observed):
    """Resources, metrics and the log (what every other builder is built with)."""

    log: EventLog = field(kw_only=True)


def _unstretched() -> float:
    return 1.0


async def _cancel(task: asyncio.Future[Any]) -> None:
    task.cancel()
    with suppress(asyncio.CancelledError):
        await task


async def _open_redis(resources: Resources) -> Redis:
    import redis.asyncio as redis
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff

    from influencer_stats.interpreters.redis_faults import REDIS_FAULTS, blocking_pool

    settings = resources.settings
    pool = blocking_pool(
        settings.redis_url.value,
        retry=Retry(NoBackoff(), 0),  # the timeout bounds each call; no hidden retries
        max_connections=settings.redis_connections,
        timeout=settings.redis_timeout_s,  # waiting for a free connection
        socket_timeout=settings.redis_timeout_s,
        socket_connect_timeout=settings.redis_timeout_s,
        health_check_interval=30,
    )
    client = redis.Redis(connection_pool=pool)
    resources.exits.push_async_callback(client.aclose, close_connection_pool=True)

    async def ping() -> bool:
        try:
            return bool(await client.ping())
        except REDIS_FAULTS:
            return False

    resources.checks["redis"] = ping
    return client
