"""Slice ``video_cache``: the per-video cache around the video client (``--video-cache memory|redis``).

Its entry ``memory`` in the core's ``video_cache`` slot (a wrapper slot whose default is
``none``), and ``redis`` with the ``redis`` slice (the joint ``redis__video_cache``: with the
claims that let one worker call for a video every worker misses), build the cache's parts here
(``cached``): the entries, the stale queue, refresh-ahead and the stale refresher (their tasks
started by the cache itself, on the first stale answer). Without this
slice the slot keeps ``none``: each request's videos are fetched within its deadline
(``videos.within_deadline``), and profiles naming a video cache are not offered.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from influencer_stats.algebras import VideoStatsSource
from influencer_stats.bootstrap.slices.slice import Slice
from influencer_stats.bootstrap.videos import VIDEO_CACHES, ids_per_call
from influencer_stats.bootstrap.wiring import Wiring

if TYPE_CHECKING:
    from influencer_stats.algebras.video_cache import StaleQueue, VideoEntries
    from influencer_stats.interpreters.stats.cache import CachePolicy
    from influencer_stats.interpreters.video_cache.miss_claims import SharedMisses
    from influencer_stats.settings import Settings

SLICE = Slice(
    "video_cache",
    "a per-video cache around the video client (--video-cache memory|redis)",
    files=(
        "influencer_stats/interpreters/video_cache",
        "influencer_stats/algebras/video_cache.py",
        "tests/unit/test_video_cache*.py",
        "tests/unit/test_miss_claims.py",
        "tests/unit/test_stale_queue.py",
        "tests/contract/test_video_cache*.py",
        "tests/integration/test_quota_economy.py",  # the quota slice's too: gone with the first removed
        "tests/integration/test_video_cache_deadline.py",
        "tests/integration/test_perf_overlap.py",
        # The day in a minute, the quota slice's too: gone with the first of the two removed.
        "perf/day.py",
        "perf/day_report.py",
        "tests/integration/test_perf_day.py",
    ),
    modules=(
        "influencer_stats.interpreters.video_cache",
        "influencer_stats.algebras.video_cache",
        "influencer_stats.bootstrap.slices.video_cache",
    ),
)

_STALE_WAIT_S = 1.0  # how long stale videos wait in the queue for a call to ride before leaving together


def video_policy(settings: Settings) -> CachePolicy:
    from influencer_stats.interpreters.stats.cache import CachePolicy

    return CachePolicy(
        ttl_s=settings.video_ttl_s,
        stale_while_revalidate_s=settings.cache_stale_while_revalidate_s,
        stale_if_error_s=settings.cache_stale_if_error_s,
        max_entries=settings.video_cache_max_entries,
    )


@VIDEO_CACHES.add(
    "memory",
    "in process: per-video TTL, single-flight, stale-while-revalidate, stale-if-error, LRU",
    scenario="repeated",
)
async def _memory_cache(wiring: Wiring, inner: VideoStatsSource) -> VideoStatsSource:
    from influencer_stats.interpreters.video_cache.stale_queue import MemoryStaleQueue
    from influencer_stats.interpreters.video_cache.video_entries import MemoryVideoEntries

    settings = wiring.settings
    entries = MemoryVideoEntries(settings.video_cache_max_entries)
    stale = MemoryStaleQueue(ids_per_call(settings))
    return cached(wiring, inner, entries, stale, time.monotonic, shared=False, misses=None)


def cached(
    wiring: Wiring,
    inner: VideoStatsSource,
    entries: VideoEntries,
    stale: StaleQueue,
    clock: Callable[[], float],
    *,
    shared: bool,
    misses: SharedMisses | None,
) -> VideoStatsSource:
    """The per-video cache over ``inner`` (each entry's, the joint's with Redis too), its parts built here: freshness stretched by the day's
    quota (``wiring.quota``: never without a budget), the calls, and (with a batching client)
    refresh-ahead and the stale queue."""
    from influencer_stats.interpreters.video_cache.asked_since import AskedSince
    from influencer_stats.interpreters.video_cache.freshness import Freshness
    from influencer_stats.interpreters.video_cache.refresh_ahead import RefreshAhead
    from influencer_stats.interpreters.video_cache.stale_refresher import StaleRefresher
    from influencer_stats.interpreters.video_cache.video_cache import CachedVideoSource
    from influencer_stats.interpreters.video_cache.video_calls import VideoCalls

    settings, metrics = wiring.settings, wiring.metrics
    policy = video_policy(settings)
    freshness = Freshness(policy, wiring.quota.stretch)
    fill_to = ids_per_call(settings)
    ahead = refresher = None
    if fill_to:
        since = AskedSince(policy.max_entries)
        ahead = RefreshAhead(since, stale, entries, clock, freshness, metrics, fill_to=fill_to, shared=shared)
    calls = VideoCalls(inner, entries, clock, freshness, metrics, ahead=ahead, misses=misses)
    if ahead is not None:
        refresher = StaleRefresher(stale, calls, ahead, clock, freshness, wait_s=_STALE_WAIT_S)
    return CachedVideoSource(
        entries,
        calls,
        freshness,
        clock,
        wiring.log,
        metrics,
        deadline_s=settings.upstream_deadline_s,
        ahead=ahead,
        refresher=refresher,
        refused=wiring.quota.refused,
    )
