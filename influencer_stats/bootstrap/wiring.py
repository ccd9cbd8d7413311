"""What builders share: the settings, one exit stack, readiness checks, one Redis client.

Builders run in three stages, each seeing what the earlier ones built:
metrics (``Resources``), then the logger (``Observed``: + metrics), then
everything else (``Wiring``: + the log and the day's quota budget).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO

from influencer_stats.algebras import AllMetrics, EventLog
from influencer_stats.settings import Settings

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer
    from redis.asyncio import Redis

    from influencer_stats.interpreters.videos.quota import QuotaBudget

#: Readiness checks by dependency name (``/readyz``).
Checks = dict[str, Callable[[], Awaitable[bool]]]


@dataclass(slots=True)
class _Shared:
    redis: Redis | None = None
    tracer: Tracer | None = None


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

    @property
    def tracer(self) -> Tracer | None:
        """The tracer of the ``tracing`` slot, or None (no traced layer is built)."""
        return self._shared.tracer

    def trace_with(self, tracer: Tracer | None) -> None:
        """Set the tracer every later builder sees (the root's first step)."""
        self._shared.tracer = tracer

    def observed(self, metrics: AllMetrics) -> Observed:
        """The next stage: these resources plus the metrics."""
        return Observed(self.settings, self.exits, self.checks, self.stdout, self._shared, metrics=metrics)


@dataclass(slots=True)
class Observed(Resources):
    """Resources plus the metrics, every role (what loggers are built with)."""

    metrics: AllMetrics = field(kw_only=True)

    def wired(self, log: EventLog) -> Wiring:
        """The last stage: these resources, the metrics, the log and the day's quota budget."""
        return Wiring(
            self.settings,
            self.exits,
            self.checks,
            self.stdout,
            self._shared,
            metrics=self.metrics,
            log=log,
            quota=_quota_budget(self.settings),
        )


@dataclass(slots=True)
class Wiring(Observed):
    """Resources, metrics, the log and the quota budget (what every other builder is built with).

    ``quota`` is built before any video builder runs, so the YouTube base
    (which spends it) and the per-video caches (which stretch freshness by
    how it is spent) get the same one whatever order they are built in;
    ``None`` without a budget (``quota_per_day`` 0).
    """

    log: EventLog = field(kw_only=True)
    quota: QuotaBudget | None = field(kw_only=True)


def _quota_budget(settings: Settings) -> QuotaBudget | None:
    if settings.quota_per_day == 0:
        return None
    from influencer_stats.interpreters.videos.quota import QuotaBudget, QuotaDay

    # Wall time: quota days are Pacific calendar days, shared by hosts.
    return QuotaBudget(settings.quota_per_day, QuotaDay(settings.quota_day_s), time.time)


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
    if resources.tracer is None:
        client = redis.Redis(connection_pool=pool)
    else:
        from influencer_stats.interpreters.tracing.otel_redis import TracedRedis

        client = TracedRedis(connection_pool=pool, tracer=resources.tracer)
    resources.exits.push_async_callback(client.aclose, close_connection_pool=True)

    async def ping() -> bool:
        try:
            return bool(await client.ping())
        except REDIS_FAULTS:
            return False

    resources.checks["redis"] = ping
    return client
