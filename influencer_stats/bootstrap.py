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
from typing import Any, BinaryIO

from influencer_stats.algebras import CollectionStatsQuery, CollectionStore, EventLog, VideoStatsSource
from influencer_stats.config import Settings
from influencer_stats.interpreters.http.api import Checks, HttpApi


async def _open_logger(settings: Settings, stdout: BinaryIO, stack: AsyncExitStack) -> EventLog:
    match settings.choices.logger:
        case "silent":
            from influencer_stats.interpreters.logging.silent import SilentEventLog

            return SilentEventLog()
        case "all":
            from influencer_stats.interpreters.logging.structlog_json import StructlogEventLog

            return StructlogEventLog(stdout)
        case "dropping":
            from influencer_stats.interpreters.logging.dropping import DroppingEventLog
            from influencer_stats.interpreters.logging.structlog_json import StructlogEventLog

            dropping = DroppingEventLog(
                StructlogEventLog(stdout), time.monotonic, limit=settings.log_rate_limit
            )
            flusher = asyncio.create_task(dropping.run_flusher(), name="log-flusher")
            stack.push_async_callback(_cancel, flusher)
            return dropping
    raise AssertionError(f"unbuildable logger {settings.choices.logger!r}")


async def _cancel(task: asyncio.Task[Any]) -> None:
    task.cancel()
    with suppress(asyncio.CancelledError):
        await task


async def _open_store(
    settings: Settings, log: EventLog, stack: AsyncExitStack, checks: Checks
) -> CollectionStore:
    match settings.choices.store:
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
    settings: Settings, store: CollectionStore, source: VideoStatsSource, log: EventLog
) -> tuple[CollectionStatsQuery, CollectionStore]:
    """The stats query, and the store every write must go through (to invalidate it)."""
    from influencer_stats.interpreters.stats.computed import ComputedStats

    computed = ComputedStats(store, source, log)
    match settings.choices.cache:
        case "none":
            return computed, store
        case "stats":
            from influencer_stats.interpreters.stats.cache import CachedStats, CachePolicy, InvalidatingStore

            policy = CachePolicy(
                ttl_s=settings.cache_ttl_s,
                stale_while_revalidate_s=settings.cache_stale_while_revalidate_s,
                stale_if_error_s=settings.cache_stale_if_error_s,
                max_entries=settings.cache_max_entries,
            )
            cached = CachedStats(computed, time.monotonic, log, policy)
            return cached, InvalidatingStore(store, cached)
    raise AssertionError(f"unbuildable cache {settings.choices.cache!r}")


async def _open_source(settings: Settings, log: EventLog, stack: AsyncExitStack) -> VideoStatsSource:
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
    source = YouTubeVideoStatsSource(call, policy, log, clock=time.monotonic)
    return CircuitBreakerSource(
        source,
        time.monotonic,
        log,
        threshold=settings.breaker_threshold,
        cooldown_s=settings.breaker_cooldown_s,
    )


@asynccontextmanager
async def open_api(settings: Settings, stdout: BinaryIO | None = None) -> AsyncIterator[HttpApi]:
    """Build every interpreter the settings name; close them all on exit."""
    async with AsyncExitStack() as stack:
        log = await _open_logger(settings, stdout or sys.stdout.buffer, stack)
        checks: Checks = {}
        store = await _open_store(settings, log, stack, checks)
        source = await _open_source(settings, log, stack)
        stats, store = _build_stats(settings, store, source, log)
        log.info(
            "service.started",
            profile=settings.profile,
            server=settings.choices.server,
            video_client=settings.choices.video_client,
            store=settings.choices.store,
            logger=settings.choices.logger,
            cache=settings.choices.cache,
        )
        yield HttpApi(store, stats, log, checks)
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


def serve(settings: Settings) -> None:
    """Run the configured server until SIGINT/SIGTERM."""
    if settings.choices.server == "aiohttp":
        _serve_aiohttp(settings)
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
        timeout_graceful_shutdown=10,
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
        shutdown_timeout=10,
    )
