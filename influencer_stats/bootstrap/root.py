"""``open_http_api(settings)``: build every interpreter the settings name, fold each stack, close all."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import BinaryIO, TypeVar

from influencer_stats.algebras import CollectionStatsQuery, CollectionStore, EventLog, VideoStatsSource
from influencer_stats.bootstrap.edge import openapi
from influencer_stats.bootstrap.logs import LOG_WRAPPERS, LOGGERS
from influencer_stats.bootstrap.metrics import METRICS, watch_dependencies
from influencer_stats.bootstrap.parts import EDGE_LAYERS, PARTS
from influencer_stats.bootstrap.quota import QUOTA_LAYERS, QUOTAS
from influencer_stats.bootstrap.registry import Registry
from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.bootstrap.stats import STATS_WRAPPERS
from influencer_stats.bootstrap.stores import STORES
from influencer_stats.bootstrap.tracing import TRACING
from influencer_stats.bootstrap.videos import VIDEO_CACHES, VIDEO_CLIENTS, VIDEO_WRAPPERS, within_deadline
from influencer_stats.bootstrap.wiring import Observed, Resources, Wiring
from influencer_stats.http.api import HttpApi
from influencer_stats.logic.service import GetStats
from influencer_stats.settings import Settings

A = TypeVar("A")
W = TypeVar("W", bound=Resources)


async def fold(
    context: W,
    inner: A,
    wrappers: Sequence[str],
    registry: Registry[Callable[[W, A], Awaitable[A]]],
) -> A:
    """Wrap ``inner`` in ``wrappers`` (outermost first), the way Starlette builds middleware."""
    for name in reversed(wrappers):
        inner = await registry[name].build(context, inner)
    return inner


@asynccontextmanager
async def open_wiring(settings: Settings, stdout: BinaryIO | None = None) -> AsyncIterator[Wiring]:
    """Metrics and the log stack of ``settings``, with the exit stack that closes everything."""
    choices = settings.choices
    async with AsyncExitStack() as exits:
        resources = Resources(settings, exits, {}, stdout or sys.stdout.buffer)
        # First, so its exporter is shut down last: the spans of everything closing are sent too.
        resources.trace_with(await TRACING[choices.one("tracing")].build(resources))
        quota = await QUOTAS[choices.one("quota")].build(resources)
        for layer in QUOTA_LAYERS:  # a slice's, around it (the shares of each client)
            quota = await layer(resources, quota)
        resources.count_with(quota)  # the metrics show its budget
        metrics = await METRICS[choices.one("metrics")].build(resources)
        observed: Observed = resources.observed(metrics)
        log: EventLog = await LOGGERS[choices.one("logger")].build(observed)
        yield observed.wired(await fold(observed, log, choices["log_wrappers"], LOG_WRAPPERS))


async def build_store(wiring: Wiring) -> CollectionStore:
    return await STORES[wiring.settings.choices.one("store")].build(wiring)


async def build_video_stats(wiring: Wiring) -> VideoStatsSource:
    """The video source stack; the outermost layer bounds a request's wait by its deadline (only
    a span of the whole fetch, when tracing, is around it)."""
    choices = wiring.settings.choices
    base = await VIDEO_CLIENTS[choices.one("video_client")].build(wiring)
    wrapped = await fold(wiring, base, choices["video_wrappers"], VIDEO_WRAPPERS)
    if choices["video_cache"]:  # a per-video cache bounds its callers' waits itself, and keeps late calls
        cached = await fold(wiring, wrapped, choices["video_cache"], VIDEO_CACHES)
        return wiring.tracing.source(cached, cached=True)
    return wiring.tracing.source(within_deadline(wiring, wrapped), cached=False)


async def build_stats(
    wiring: Wiring, store: CollectionStore, source: VideoStatsSource
) -> tuple[CollectionStatsQuery, CollectionStore]:
    """The stats query, and the store every write must go through (it invalidates the query).

    The query is the use case (``logic.service.GetStats``) with the ``cache``
    wrappers folded around it: what the HTTP edge calls.
    """
    from influencer_stats.interpreters.stats.cache import InvalidatingStore

    use_case: CollectionStatsQuery = GetStats(store, source, wiring.log)
    choices = wiring.settings.choices
    stats = await fold(wiring, use_case, choices["cache"], STATS_WRAPPERS)
    stats = wiring.tracing.stats(stats, cached=bool(choices["cache"] or choices["video_cache"]))
    return stats, InvalidatingStore(store, stats)


@asynccontextmanager
async def open_http_api(settings: Settings, stdout: BinaryIO | None = None) -> AsyncIterator[HttpApi]:
    """The ``HttpApi`` of ``settings``: every interpreter they name built, closed on exit."""
    async with open_wiring(settings, stdout) as wiring:
        source = await build_video_stats(wiring)
        stats, store = await build_stats(wiring, await build_store(wiring), source)
        built = {part.name: await part.build(wiring, store, stats) for part in PARTS}
        if not METRICS[settings.choices.one("metrics")].silent:  # else nobody would see what they find
            # Started last, so stopped first: no check runs against a client already closed.
            wiring.background(watch_dependencies(wiring.checks, wiring.metrics), "dependency-checks")
        log = wiring.log
        log.info(
            "service.started",
            profile=settings.profile,
            **{name: settings.choices.text(name) for name in SLOTS},
        )
        per_process = [STATS_WRAPPERS[name].per_process for name in settings.choices["cache"]]
        per_process_cache = next((declared for declared in per_process if declared is not None), None)
        if STORES[settings.choices.one("store")].shared and per_process_cache is not None:
            log.warning(
                "config.single_process_cache",
                detail="the stats cache is per process but the store is shared: with several workers "
                "a write through one leaves the others' cached stats stale for up to the TTL; "
                f"use {per_process_cache[1]}",
            )
        yield HttpApi(
            store,
            stats,
            log,
            wiring.metrics,
            wiring.checks,
            write_token=settings.write_token.value if settings.write_token else None,
            max_videos=settings.max_videos,
            openapi=openapi(settings.max_videos),
            tracing=wiring.tracing.requests(),
            parts={name: part.part for name, part in built.items()},
            forgets=[part.forget for part in built.values() if part.forget is not None],
            collections=[part.collections for part in built.values() if part.collections is not None],
            gzip_min_bytes=settings.gzip_min_bytes,
            layers=[layer for build in EDGE_LAYERS if (layer := build(wiring, log)) is not None],
        )
        log.info("service.stopping", profile=settings.profile)
