"""Joint ``redis__video_cache``: the per-video cache in Redis (``--video-cache redis``), for every worker and host.

The ``redis`` slice's and the ``video_cache`` slice's only together (``slice.Joint``): loaded
while both are installed, removed with either. Its entry keeps the entries and one queue of stale
videos in the shared Redis (on a Cluster spread over ``CLUSTER_VIDEO_SHARDS`` slots, each with its
queue), and the claims that let one worker call for a video every worker misses.
"""

from __future__ import annotations

import secrets
import time

from influencer_stats.algebras import VideoStatsSource
from influencer_stats.bootstrap.slices.redis import redis, redis_keys
from influencer_stats.bootstrap.slices.slice import Joint
from influencer_stats.bootstrap.slices.video_cache import cached, video_policy
from influencer_stats.bootstrap.videos import VIDEO_CACHES, ids_per_call
from influencer_stats.bootstrap.wiring import Wiring

JOINT = Joint(
    ("redis", "video_cache"),
    "the per-video cache in Redis (--video-cache redis), its stale queue and miss claims",
    files=(
        "influencer_stats/interpreters/video_cache/video_cache_redis.py",
        "tests/integration/test_redis_stale_queue.py",
        "tests/integration/test_redis_video_shards.py",
        "tests/integration/test_redis_cluster_video_cache.py",
        "tests/integration/test_video_cache_redis_frozen.py",
    ),
    modules=(
        "influencer_stats.interpreters.video_cache.video_cache_redis",
        "influencer_stats.bootstrap.slices.redis__video_cache",
    ),
)

_SHARED_MISS_POLL_S = 0.005  # how often a worker reads the entries it waits for from another worker
# Ids a process waits for at once (each poll reads them all); beyond, a miss calls for its own.
_MAX_WAITED_IDS = 2_000


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
    policy = video_policy(settings)
    # Kept a quota day at least, so a spent budget still has every video seen today to serve.
    longest = max(policy.stale_while_revalidate_s, policy.stale_if_error_s)
    keep_s = max(policy.ttl_s + longest, settings.quota_day_s)
    keys = redis_keys(wiring)
    client = await redis(wiring)
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
    return cached(wiring, inner, entries, stale, time.time, shared=True, misses=misses)  # wall time: hosts
