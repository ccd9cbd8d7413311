"""Slice ``video_cache``: the per-video cache around the video client (``--video-cache memory|redis``).

Its entries ``memory`` and ``redis`` in the core's ``video_cache`` slot (a wrapper slot whose
default is ``none``) build the cache's parts here: the entries, the stale queue, refresh-ahead and
the stale refresher (their tasks started by the cache itself, on the first stale answer), and
with Redis the claims that let one worker call for a video every worker misses. Without this
slice the slot keeps ``none``: each request's videos are fetched within its deadline
(``videos.within_deadline``), and profiles naming a video cache are not offered.
"""

from __future__ import annotations

import secrets
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
        "tests/integration/test_redis_stale_queue.py",
        "tests/integration/test_redis_video_shards.py",
        "tests/integration/test_redis_cluster_video_cache.py",
        "tests/integration/test_quota_economy.py",  # the quota slice's too: gone with the first removed
        "tests/integration/test_video_cache_deadline.py",
        "tests/integration/test_perf_overlap.py",
    ),
    modules=(
        "influencer_stats.interpreters.video_cache",
        "influencer_stats.algebras.video_cache",
        "influencer_stats.bootstrap.slices.video_cache",
    ),
)

_SHARED_MISS_POLL_S = 0.005  # how often a worker reads the entries it waits for from another worker
# Ids a process waits for at once (each poll reads them all); beyond, a miss calls for its own.
_MAX_WAITED_IDS = 2_000
_STALE_WAIT_S = 1.0  # how long stale videos wait in the queue for a call to ride before leaving together


def _video_policy(settings: Settings) -> CachePolicy:
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
    return _cached(wiring, inner, entries, stale, time.monotonic, shared=False, misses=None)


@VIDEO_CACHES.add(
    "redis",
    "shared by every worker and host through Redis: one MGET per fetch",
    ready=("redis",),
    needs=("redis",),
    scenario="repeated",
)
async def _redis_cache(wiring: Wiring, inner: VideoStatsSource) -> VideoStatsSource:
    from influencer_stats.interpreters.video_cache.miss_claims import SharedMisses
    from influencer_stats.interpreters.video_cache.video_cache_redis import (
        RedisMissClaims,
        RedisStaleQueue,
        RedisVideoEntries,
    )

    settings = wiring.settings
    policy = _video_policy(settings)
    # Kept a quota day at least, so a spent budget still has every video seen today to serve.
    longest = max(policy.stale_while_revalidate_s, policy.stale_if_error_s)
    keep_s = max(policy.ttl_s + longest, settings.quota_day_s)
    keys = wiring.redis_keys()
    client = await wiring.redis()
    entries = RedisVideoEntries(
        client, keys.video, round(1000 * keep_s), wiring.log, decoded=settings.video_cache_max_entries
    )
    # One queue of stale videos for every worker: each is refreshed once, not once per worker.
    stale = RedisStaleQueue(client, keys, max(1, ids_per_call(settings)), round(1000 * keep_s), wiring.log)
    # A video several workers miss at once is called for by the first to claim it (held a request's
    # upstream deadline at most); the others wait for its entry, reading Redis every few ms, once
    # per process, one call's timeout at most (by a timer: a stalled Redis holds nobody longer):
    # then they call themselves (the claimer's process may have died, or its call be retrying).
    claims = RedisMissClaims(
        client, keys, secrets.token_hex(8), round(1000 * settings.upstream_deadline_s), wiring.log
    )
    misses = SharedMisses(
        claims,
        time.time,
        poll_s=_SHARED_MISS_POLL_S,
        wait_s=settings.upstream_call_timeout_s,
        max_ids=_MAX_WAITED_IDS,
    )
    return _cached(wiring, inner, entries, stale, time.time, shared=True, misses=misses)  # wall time: hosts


def _cached(
    wiring: Wiring,
    inner: VideoStatsSource,
    entries: VideoEntries,
    stale: StaleQueue,
    clock: Callable[[], float],
    *,
    shared: bool,
    misses: SharedMisses | None,
) -> VideoStatsSource:
    """The per-video cache over ``inner``, its parts built here: freshness stretched by the day's
    quota (``wiring.quota``: never without a budget), the calls, and (with a batching client)
    refresh-ahead and the stale queue."""
    from influencer_stats.interpreters.video_cache.asked_since import AskedSince
    from influencer_stats.interpreters.video_cache.freshness import Freshness
    from influencer_stats.interpreters.video_cache.refresh_ahead import RefreshAhead
    from influencer_stats.interpreters.video_cache.stale_refresher import StaleRefresher
    from influencer_stats.interpreters.video_cache.video_cache import CachedVideoSource
    from influencer_stats.interpreters.video_cache.video_calls import VideoCalls

    settings, metrics = wiring.settings, wiring.metrics
    policy = _video_policy(settings)
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
    )
