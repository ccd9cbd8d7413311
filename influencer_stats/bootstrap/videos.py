"""The ``video_client`` slot and its wrappers: where video statistics come from."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, cast

from influencer_stats.algebras import VideoStatsSource
from influencer_stats.bootstrap.registry import Registry
from influencer_stats.bootstrap.wiring import Wiring

if TYPE_CHECKING:
    from influencer_stats.algebras.youtube import YouTubeConnections
    from influencer_stats.interpreters.youtube.aiohttp_client import AiohttpVideosList
    from influencer_stats.interpreters.youtube.call_gate import CallGate
    from influencer_stats.settings import Settings

SourceBuilder = Callable[[Wiring], Awaitable[VideoStatsSource]]
SourceWrapper = Callable[[Wiring, VideoStatsSource], Awaitable[VideoStatsSource]]
VIDEO_CLIENTS: Registry[SourceBuilder] = Registry("video client")
VIDEO_WRAPPERS: Registry[SourceWrapper] = Registry("video wrapper")
#: Per-video caches (the ``video_cache`` slice registers its entries here; ``none`` without them).
VIDEO_CACHES: Registry[SourceWrapper] = Registry("video cache")


@VIDEO_CLIENTS.add(
    "fake",
    "offline: stats derived from each id, growing from the start (INFLUENCER_STATS_FAKE_GROWTH); "
    "ids starting with X are missing",
)
async def _fake(wiring: Wiring) -> VideoStatsSource:
    from influencer_stats.interpreters.videos.fake import FakeVideoStatsSource

    # Monotonic: the counts only ever grow, whatever the wall clock does.
    return FakeVideoStatsSource(clock=time.monotonic, speed=wiring.settings.fake_growth)


def needs_key(settings: Settings) -> str | None:
    """A real client pointed at Google needs a key; a double does not."""
    from influencer_stats.settings import default_of

    if settings.youtube_api_key is None and settings.youtube_api_url == default_of("youtube_api_url"):
        return "calls the real YouTube API: set YOUTUBE_API_KEY (or point YOUTUBE_API_URL at a videos.list double)"
    return None


async def _aiohttp(wiring: Wiring, pool: int) -> AiohttpVideosList:
    import aiohttp

    from influencer_stats.interpreters.youtube.aiohttp_client import AiohttpVideosList

    settings = wiring.settings
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=pool, limit_per_host=pool, ttl_dns_cache=300),
        timeout=aiohttp.ClientTimeout(
            total=None,
            sock_connect=settings.upstream_call_timeout_s,
            sock_read=settings.upstream_call_timeout_s,
        ),
        trace_configs=wiring.tracing.aiohttp_trace_configs(),
    )
    wiring.exits.push_async_callback(session.close)
    return AiohttpVideosList(session, settings.youtube_api_url, api_key(settings))


def api_key(settings: Settings) -> str | None:
    """The key a YouTube client sends (in a header), if one is set."""
    return settings.youtube_api_key.value if settings.youtube_api_key else None


#: Opens a client of one HTTP library on a pool of that many connections, closed with the service.
HttpClient = Callable[[Wiring, int], Awaitable["YouTubeConnections"]]
#: The process's YouTube connections: a client of one HTTP library, and the gate in front of them.
Connections = tuple["YouTubeConnections", "CallGate"]
#: The YouTube clients' table: the HTTP library each registered client calls through, by its
#: name (``add_youtube_client``). The readers take the video client's; with another (the fake),
#: the core's aiohttp.
HTTP_LIBRARIES: dict[str, HttpClient] = {}
#: The YouTube clients that put up to 50 ids in one ``videos.list`` call.
_BATCHED: set[str] = set()
#: What slices add beside each YouTube client of one call per video, registered or to come
#: (``for_each_youtube_client``): the ``batching`` slice, its batched twin.
_BESIDE_EACH: list[Callable[[str, HttpClient], None]] = []


async def youtube_connections(wiring: Wiring, client: HttpClient | None = None) -> Connections:
    """The process's one pool of ``upstream_connections`` YouTube connections (of ``client``'s
    library; by default the video client's in ``HTTP_LIBRARIES``, aiohttp for the fake), closed
    with the service, and the ``CallGate`` every call takes a slot of first: as many calls at once as the pool has
    connections, so no call's timer runs and no unit is spent while it waits for one, and
    requests (a stats request, each read of a playlist or channel) take turns for them as flows.
    Shared by ``videos.list`` and the readers of playlists and channels."""
    from influencer_stats.interpreters.youtube.call_gate import CallGate

    if client is None:
        client = HTTP_LIBRARIES.get(wiring.settings.choices.one("video_client"), _aiohttp)
    settings = wiring.settings

    async def build() -> Connections:
        gate = CallGate(
            settings.upstream_connections,
            per_flow=settings.upstream_concurrency,
            max_waiting=settings.upstream_queue,
        )
        return await client(wiring, settings.upstream_connections), gate

    return await wiring.once(f"youtube-connections:{client.__name__}", build)


def built_gate(wiring: Wiring) -> CallGate | None:
    """The video client's ``CallGate``, if its connections were built already (the YouTube
    clients build them before their wrappers), else None (the fake, or a stack built by hand)."""
    client = HTTP_LIBRARIES.get(wiring.settings.choices.one("video_client"))
    if client is None:
        return None
    made = wiring.made(f"youtube-connections:{client.__name__}")
    return cast("Connections", made)[1] if made is not None else None


async def _youtube(client: HttpClient, batched: bool, wiring: Wiring) -> VideoStatsSource:
    """``videos.list`` through ``client``: one id per call, or up to 50 when ``batched``."""
    from influencer_stats.interpreters.youtube.youtube_api import MAX_IDS_PER_CALL
    from influencer_stats.interpreters.youtube.youtube_source import UpstreamPolicy, YouTubeVideoStatsSource

    settings = wiring.settings
    policy = UpstreamPolicy(
        ids_per_call=MAX_IDS_PER_CALL if batched else 1,
        call_timeout_s=settings.upstream_call_timeout_s,
        retries=settings.upstream_retries,
    )
    http, gate = await youtube_connections(wiring, client)
    call = await wiring.quota.governed(wiring, wiring.tracing.call(http))
    return YouTubeVideoStatsSource(call, policy, gate, wiring.log, wiring.metrics, clock=time.monotonic)


def add_youtube_client(name: str, library: HttpClient, doc: str, *, batched: bool = False) -> None:
    """Register ``name``, a video client calling ``videos.list`` through ``library`` (one id per
    call, or up to 50 when ``batched``), under the breaker, spending quota, and enter it in the
    YouTube clients' table the readers and ``ids_per_call`` read (a slice adds its clients so);
    one of one id per call gets what ``for_each_youtube_client`` asked for beside it."""
    VIDEO_CLIENTS.register(
        name,
        partial(_youtube, library, batched),
        doc,
        wrappers=("breaker",),
        check=needs_key,
        spends_quota=True,
    )
    HTTP_LIBRARIES[name] = library
    if batched:
        _BATCHED.add(name)
        return
    for beside in _BESIDE_EACH:
        beside(name, library)


def for_each_youtube_client(beside: Callable[[str, HttpClient], None]) -> None:
    """Call ``beside(name, library)`` for each YouTube client of one id per call, those registered
    and those registered later (a slice's clients, whatever the order of ``INSTALLED``)."""
    for name, library in list(HTTP_LIBRARIES.items()):
        if name not in _BATCHED:
            beside(name, library)
    _BESIDE_EACH.append(beside)


def batches(video_client: str) -> bool:
    """Whether ``video_client`` puts up to 50 ids in one ``videos.list`` call."""
    return video_client in _BATCHED


add_youtube_client("aiohttp", _aiohttp, "aiohttp, one videos.list call per video")


def within_deadline(wiring: Wiring, inner: VideoStatsSource) -> VideoStatsSource:
    """``inner`` within the request's deadline: a ``DeadlineSource``, the outermost layer of a
    stack without a per-video cache (whatever ``inner`` is)."""
    from influencer_stats.interpreters.videos.deadline import DeadlineSource

    return DeadlineSource(inner, wiring.settings.upstream_deadline_s)


@VIDEO_WRAPPERS.add(
    "breaker", "circuit breaker: fails fast for a cool-down after repeated failures", scenario="failing"
)
async def _breaker(wiring: Wiring, inner: VideoStatsSource) -> VideoStatsSource:
    """A ``CircuitBreakerSource`` around ``inner``, whatever it is."""
    from influencer_stats.interpreters.videos.circuit_breaker import CircuitBreaker, CircuitBreakerSource

    settings = wiring.settings
    breaker = CircuitBreaker(
        time.monotonic,
        wiring.log,
        wiring.metrics,
        threshold=settings.breaker_threshold,
        cooldown_s=settings.breaker_cooldown_s,
    )
    return CircuitBreakerSource(inner, breaker)


def ids_per_call(settings: Settings) -> int:
    """What one quota unit buys with the chosen client: 50 ids when it batches, else 0 (it does not batch)."""
    from influencer_stats.interpreters.youtube.youtube_api import MAX_IDS_PER_CALL

    return MAX_IDS_PER_CALL if batches(settings.choices.one("video_client")) else 0
