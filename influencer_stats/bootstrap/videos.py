"""The ``video_client`` slot and its wrappers: where video statistics come from."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING

from influencer_stats.algebras import VideoStatsSource
from influencer_stats.bootstrap.registry import Registry
from influencer_stats.bootstrap.wiring import Wiring

if TYPE_CHECKING:
    from influencer_stats.config.settings import Settings
    from influencer_stats.interpreters.videos.youtube_api import VideosListCall

SourceBuilder = Callable[[Wiring], Awaitable[VideoStatsSource]]
SourceWrapper = Callable[[Wiring, VideoStatsSource], Awaitable[VideoStatsSource]]
VIDEO_CLIENTS: Registry[SourceBuilder] = Registry("video client")
VIDEO_WRAPPERS: Registry[SourceWrapper] = Registry("video wrapper")


@VIDEO_CLIENTS.add("fake", "offline: stable stats derived from each id; ids starting with X are missing")
async def _fake(_: Wiring) -> VideoStatsSource:
    from influencer_stats.interpreters.videos.fake import FakeVideoStatsSource

    return FakeVideoStatsSource()


def needs_key(settings: Settings) -> str | None:
    """A real client pointed at Google needs a key; a double does not."""
    from influencer_stats.config.settings import default_of

    if settings.youtube_api_key is None and settings.youtube_api_url == default_of("youtube_api_url"):
        return "calls the real YouTube API: set YOUTUBE_API_KEY (or point YOUTUBE_API_URL at a videos.list double)"
    return None


async def _httpx(wiring: Wiring) -> VideosListCall:
    import logging

    import httpx

    from influencer_stats.interpreters.videos.httpx_client import HttpxVideosList

    settings = wiring.settings
    logging.getLogger("httpx").setLevel(logging.WARNING)  # it logs every request URL at INFO
    pool = settings.upstream_connections
    client = httpx.AsyncClient(
        limits=httpx.Limits(max_connections=pool, max_keepalive_connections=pool),
        timeout=httpx.Timeout(settings.upstream_call_timeout_s),
    )
    wiring.exits.push_async_callback(client.aclose)
    return HttpxVideosList(client, settings.youtube_api_url, _key(settings))


async def _aiohttp(wiring: Wiring) -> VideosListCall:
    import aiohttp

    from influencer_stats.interpreters.videos.aiohttp_client import AiohttpVideosList

    settings = wiring.settings
    pool = settings.upstream_connections
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=pool, limit_per_host=pool, ttl_dns_cache=300),
        timeout=aiohttp.ClientTimeout(
            total=None,
            sock_connect=settings.upstream_call_timeout_s,
            sock_read=settings.upstream_call_timeout_s,
        ),
    )
    wiring.exits.push_async_callback(session.close)
    return AiohttpVideosList(session, settings.youtube_api_url, _key(settings))


def _key(settings: Settings) -> str | None:
    return settings.youtube_api_key.value if settings.youtube_api_key else None


async def _youtube(
    client: Callable[[Wiring], Awaitable[VideosListCall]], batched: bool, wiring: Wiring
) -> VideoStatsSource:
    """``videos.list`` through ``client``: one id per call, or up to 50 when ``batched``."""
    from influencer_stats.interpreters.videos.youtube_api import MAX_IDS_PER_CALL
    from influencer_stats.interpreters.videos.youtube_source import UpstreamPolicy, YouTubeVideoStatsSource

    settings = wiring.settings
    policy = UpstreamPolicy(
        ids_per_call=MAX_IDS_PER_CALL if batched else 1,
        concurrency=settings.upstream_concurrency,
        call_timeout_s=settings.upstream_call_timeout_s,
        deadline_s=settings.upstream_deadline_s,
        retries=settings.upstream_retries,
    )
    return YouTubeVideoStatsSource(
        await client(wiring), policy, wiring.log, wiring.metrics, clock=time.monotonic
    )


for _name, _client, _batched, _doc in (
    ("httpx", _httpx, False, "httpx, one videos.list call per video"),
    ("httpx-batched", _httpx, True, "httpx, up to 50 ids per videos.list call"),
    ("aiohttp", _aiohttp, False, "aiohttp, one videos.list call per video"),
    ("aiohttp-batched", _aiohttp, True, "aiohttp, up to 50 ids per videos.list call"),
):
    VIDEO_CLIENTS.register(
        _name, partial(_youtube, _client, _batched), _doc, wrappers=("breaker",), check=needs_key
    )


@VIDEO_WRAPPERS.add("breaker", "circuit breaker: fails fast for a cool-down after repeated failures")
async def _breaker(wiring: Wiring, inner: VideoStatsSource) -> VideoStatsSource:
    from influencer_stats.interpreters.videos.circuit_breaker import CircuitBreakerSource

    settings = wiring.settings
    return CircuitBreakerSource(
        inner,
        time.monotonic,
        wiring.log,
        wiring.metrics,
        threshold=settings.breaker_threshold,
        cooldown_s=settings.breaker_cooldown_s,
    )
