"""The composition root: the only place that knows concrete interpreters.

It turns ``Settings`` into running interpreters. Interpreter modules are
imported inside the builder that needs them, so a profile that does not use
a library never imports it.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager, suppress
from typing import TYPE_CHECKING, Any, BinaryIO
from urllib.parse import urlsplit

from influencer_stats.algebras import (
    CollectionStatsQuery,
    CollectionStore,
    EventLog,
    Metrics,
    VideoStatsSource,
)
from influencer_stats.config import Settings
from influencer_stats.http.api import Checks, HttpApi
from influencer_stats.http.openapi import openapi_document

if TYPE_CHECKING:
    from influencer_stats.interpreters.metrics.prometheus import PrometheusMetrics


def _secrets(settings: Settings) -> list[str]:
    """Values no log line may contain."""
    secrets = [s.value for s in (settings.youtube_api_key, settings.write_token) if s is not None]
    password = urlsplit(settings.redis_url.value).password
    return [*secrets, password] if password else secrets


async def _open_logger(
    settings: Settings, stdout: BinaryIO, stack: AsyncExitStack, metrics: Metrics
) -> EventLog:
    match settings.choices.logger:
        case "silent":
            from influencer_stats.interpreters.logging.silent import SilentEventLog

            return SilentEventLog()
        case "all":
            from influencer_stats.interpreters.logging.structlog_json import StructlogEventLog

            return StructlogEventLog(stdout, _secrets(settings))
        case "dropping":
            from influencer_stats.interpreters.logging.dropping import DroppingEventLog
            from influencer_stats.interpreters.logging.structlog_json import StructlogEventLog

            dropping = DroppingEventLog(
                StructlogEventLog(stdout, _secrets(settings)), time.monotonic, limit=settings.log_rate_limit
            )
            flusher = asyncio.create_task(
                dropping.run_flusher(on_dropped=metrics.logs_dropped), name="log-flusher"
            )
            stack.push_async_callback(_cancel, flusher)
            return dropping
    raise AssertionError(f"unbuildable logger {settings.choices.logger!r}")


async def _cancel(task: asyncio.Task[Any]) -> None:
    task.cancel()
    with suppress(asyncio.CancelledError):
        await task


def _open_metrics(settings: Settings, stack: AsyncExitStack) -> Metrics:
    if settings.choices.metrics == "none":
        from influencer_stats.interpreters.metrics.noop import NoMetrics

        return NoMetrics()
    from influencer_stats.interpreters.metrics.loop_lag import monitor_loop_lag
    from influencer_stats.interpreters.metrics.prometheus import PrometheusMetrics

    metrics = PrometheusMetrics(settings.prometheus_multiproc_dir)
    lag = asyncio.create_task(monitor_loop_lag(metrics.loop_lag), name="loop-lag")
    stack.push_async_callback(_cancel, lag)
    if metrics.multiprocess:
        stack.callback(metrics.publish)  # runs last: the final values of this worker
        publisher = asyncio.create_task(_publish_forever(metrics), name="metrics-publisher")
        stack.push_async_callback(_cancel, publisher)
    return metrics


async def _publish_forever(metrics: PrometheusMetrics) -> None:
    """Share this worker's metric values with the others, every ``publish_interval``."""
    failing = False
    while True:
        try:
            metrics.publish()
            failing = False
        except OSError as exc:  # a full disk must not stop the worker; the next round retries
            if not failing:  # once per streak (the logger is built after the metrics)
                print(f"influencer-stats: metrics snapshot not written: {exc}", file=sys.stderr)
            failing = True
        await asyncio.sleep(metrics.publish_interval)


async def _open_redis(settings: Settings, stack: AsyncExitStack, checks: Checks) -> Any:
    """One shared redis-py asyncio client (bounded, blocking pool; timeouts on every call)."""
    import redis.asyncio as redis
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff

    pool = redis.BlockingConnectionPool.from_url(
        settings.redis_url.value,
        retry=Retry(NoBackoff(), 0),  # the timeout bounds each call; no hidden retries
        max_connections=settings.redis_connections,
        timeout=settings.redis_timeout_s,  # waiting for a free connection
        socket_timeout=settings.redis_timeout_s,
        socket_connect_timeout=settings.redis_timeout_s,
        health_check_interval=30,
    )
    client = redis.Redis(connection_pool=pool)
    stack.push_async_callback(client.aclose, close_connection_pool=True)

    async def ping() -> bool:
        try:
            return bool(await client.ping())
        except (redis.RedisError, OSError):
            return False

    checks["redis"] = ping
    return client


async def _open_store(
    settings: Settings, log: EventLog, stack: AsyncExitStack, checks: Checks, redis_client: Any
) -> CollectionStore:
    match settings.choices.store:
        case "redis":
            from influencer_stats.interpreters.collections.redis_store import RedisCollectionStore

            return RedisCollectionStore(redis_client)
        case "sqlite":
            from pathlib import Path

            from influencer_stats.interpreters.collections.sqlite import SqliteCollectionStore

            path = Path(settings.db_path)
            path.parent.mkdir(parents=True, exist_ok=True)
            sqlite = await SqliteCollectionStore.open(path)
            stack.push_async_callback(sqlite.close)
            checks["sqlite"] = sqlite.ping
            return sqlite
        case "list":
            from influencer_stats.interpreters.collections.memory_list import ListCollectionStore

            return ListCollectionStore(log)
        case "dict":
            from influencer_stats.interpreters.collections.memory_dict import DictCollectionStore

            return DictCollectionStore()
    raise AssertionError(f"unbuildable store {settings.choices.store!r}")


def _build_stats(
    settings: Settings,
    store: CollectionStore,
    source: VideoStatsSource,
    log: EventLog,
    redis_client: Any,
    metrics: Metrics,
) -> tuple[CollectionStatsQuery, CollectionStore]:
    """The stats query, and the store every write must go through (to invalidate it)."""
    from influencer_stats.interpreters.stats.computed import ComputedStats

    computed = ComputedStats(store, source, log)
    if settings.choices.cache == "none":
        return computed, store
    from influencer_stats.interpreters.stats.cache import CachedStats, CachePolicy, InvalidatingStore

    policy = CachePolicy(
        ttl_s=settings.cache_ttl_s,
        stale_while_revalidate_s=settings.cache_stale_while_revalidate_s,
        stale_if_error_s=settings.cache_stale_if_error_s,
        max_entries=settings.cache_max_entries,
    )
    cached: CollectionStatsQuery
    match settings.choices.cache:
        case "stats":
            cached = CachedStats(computed, time.monotonic, log, policy, metrics)
        case "redis":
            from influencer_stats.interpreters.stats.redis_cache import RedisCachedStats

            # Wall-clock time: entries are shared by processes and hosts.
            cached = RedisCachedStats(computed, redis_client, time.time, log, policy)
        case other:
            raise AssertionError(f"unbuildable cache {other!r}")
    return cached, InvalidatingStore(store, cached)


async def _open_source(
    settings: Settings, log: EventLog, stack: AsyncExitStack, metrics: Metrics
) -> VideoStatsSource:
    client = settings.choices.video_client
    if client == "fake":
        from influencer_stats.interpreters.videos.fake import FakeVideoStatsSource

        return FakeVideoStatsSource()
    from influencer_stats.interpreters.videos.circuit_breaker import CircuitBreakerSource
    from influencer_stats.interpreters.videos.youtube_api import MAX_IDS_PER_CALL, VideosListCall
    from influencer_stats.interpreters.videos.youtube_source import UpstreamPolicy, YouTubeVideoStatsSource

    key = settings.youtube_api_key.value if settings.youtube_api_key else None
    pool = settings.upstream_connections
    call: VideosListCall
    if client in ("httpx", "httpx-batched"):
        import logging

        import httpx

        from influencer_stats.interpreters.videos.httpx_client import HttpxVideosList

        # httpx logs every request URL at INFO; keep it out of any log.
        logging.getLogger("httpx").setLevel(logging.WARNING)
        http = httpx.AsyncClient(
            limits=httpx.Limits(max_connections=pool, max_keepalive_connections=pool),
            timeout=httpx.Timeout(settings.upstream_call_timeout_s),
        )
        stack.push_async_callback(http.aclose)
        call = HttpxVideosList(http, settings.youtube_api_url, key)
    elif client in ("aiohttp", "aiohttp-batched"):
        import aiohttp

        from influencer_stats.interpreters.videos.aiohttp_client import AiohttpVideosList

        session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=pool, limit_per_host=pool, ttl_dns_cache=300),
            timeout=aiohttp.ClientTimeout(
                total=None,
                sock_connect=settings.upstream_call_timeout_s,
                sock_read=settings.upstream_call_timeout_s,
            ),
        )
        stack.push_async_callback(session.close)
        call = AiohttpVideosList(session, settings.youtube_api_url, key)
    else:
        raise AssertionError(f"unbuildable video client {client!r}")
    policy = UpstreamPolicy(
        ids_per_call=MAX_IDS_PER_CALL if client.endswith("-batched") else 1,
        concurrency=settings.upstream_concurrency,
        call_timeout_s=settings.upstream_call_timeout_s,
        deadline_s=settings.upstream_deadline_s,
    )
    source = YouTubeVideoStatsSource(call, policy, log, clock=time.monotonic, metrics=metrics)
    return CircuitBreakerSource(
        source,
        time.monotonic,
        log,
        threshold=settings.breaker_threshold,
        cooldown_s=settings.breaker_cooldown_s,
        metrics=metrics,
    )


@asynccontextmanager
async def open_api(settings: Settings, stdout: BinaryIO | None = None) -> AsyncIterator[HttpApi]:
    """Build every interpreter the settings name; close them all on exit."""
    async with AsyncExitStack() as stack:
        metrics = _open_metrics(settings, stack)
        log = await _open_logger(settings, stdout or sys.stdout.buffer, stack, metrics)
        checks: Checks = {}
        uses_redis = "redis" in (settings.choices.store, settings.choices.cache)
        redis_client = await _open_redis(settings, stack, checks) if uses_redis else None
        store = await _open_store(settings, log, stack, checks, redis_client)
        source = await _open_source(settings, log, stack, metrics)
        stats, store = _build_stats(settings, store, source, log, redis_client, metrics)
        log.info(
            "service.started",
            profile=settings.profile,
            server=settings.choices.server,
            video_client=settings.choices.video_client,
            store=settings.choices.store,
            logger=settings.choices.logger,
            cache=settings.choices.cache,
        )
        if settings.choices.store == "redis" and settings.choices.cache == "stats":
            log.warning(
                "config.single_process_cache",
                detail="the stats cache is per process but the store is shared: with several workers "
                "a write through one leaves the others' cached stats stale for up to the TTL; "
                "use --cache redis",
            )
        yield HttpApi(
            store,
            stats,
            log,
            metrics,
            checks,
            write_token=settings.write_token.value if settings.write_token else None,
            max_videos=settings.max_videos,
            openapi=openapi_document(settings.max_videos),
        )
        log.info("service.stopping", profile=settings.profile)


def _api_factory(
    settings: Settings, stdout: BinaryIO | None
) -> Callable[[], AbstractAsyncContextManager[HttpApi]]:
    return lambda: open_api(settings, stdout)


def build_asgi_app(settings: Settings, stdout: BinaryIO | None = None) -> Any:
    """The ASGI application for ``settings`` (for uvicorn and ASGI tests)."""
    match settings.choices.server:
        case "starlette":
            from influencer_stats.interpreters.http.starlette_server import create_app

            return create_app(_api_factory(settings, stdout))
        case "asgi":
            from influencer_stats.interpreters.http.asgi_server import AsgiApp

            return AsgiApp(_api_factory(settings, stdout))
    raise ValueError(f"server {settings.choices.server!r} is not an ASGI application")


def rsgi_app_from_environment() -> Any:
    """Granian's factory, called in each worker process: settings from the environment.

    ``_serve_granian`` exports every resolved choice to the environment before
    Granian starts its workers, so each worker builds exactly what main.py resolved.
    """
    import os

    from influencer_stats.config import resolve
    from influencer_stats.interpreters.http.rsgi_server import RsgiApp

    settings = resolve(None, {}, os.environ)
    return RsgiApp(_api_factory(settings, None))


def serve(settings: Settings) -> None:
    """Run the configured server until SIGINT/SIGTERM."""
    if settings.choices.server == "aiohttp":
        _serve_aiohttp(settings)
        return
    if settings.choices.server == "granian":
        _serve_granian(settings)
        return
    import uvicorn

    uvicorn.run(
        build_asgi_app(settings),
        host=settings.host,
        port=settings.port,
        lifespan="on",
        access_log=False,
        log_level="warning",
        server_header=False,
        timeout_keep_alive=int(settings.keepalive_s),
        timeout_graceful_shutdown=int(settings.graceful_shutdown_s),
        limit_concurrency=settings.limit_concurrency,
        backlog=settings.backlog,
    )


def _serve_aiohttp(settings: Settings) -> None:
    from aiohttp import web

    from influencer_stats.interpreters.http.aiohttp_server import create_app

    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is optional
        pass
    else:
        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    web.run_app(
        create_app(_api_factory(settings, None)),
        host=settings.host,
        port=settings.port,
        access_log=None,
        print=None,
        shutdown_timeout=settings.graceful_shutdown_s,
        keepalive_timeout=settings.keepalive_s,
        backlog=settings.backlog,
    )


def _serve_granian(settings: Settings) -> None:
    import os
    from dataclasses import fields

    from granian import Granian
    from granian.constants import Interfaces, Loops, TaskImpl
    from granian.log import LogLevels

    from influencer_stats.config import Choices

    os.environ["INFLUENCER_STATS_PROFILE"] = settings.profile
    for slot in fields(Choices):
        os.environ[f"INFLUENCER_STATS_{slot.name.upper()}"] = getattr(settings.choices, slot.name)
    Granian(
        "influencer_stats.bootstrap:rsgi_app_from_environment",
        factory=True,
        address=settings.host,
        port=settings.port,
        interface=Interfaces.RSGI,
        workers=1,
        loop=Loops.auto,
        task_impl=TaskImpl(settings.granian_tasks),
        websockets=False,
        backlog=settings.backlog,
        log_level=LogLevels.warning,
        log_access=False,
        workers_kill_timeout=int(settings.graceful_shutdown_s),
    ).serve()
