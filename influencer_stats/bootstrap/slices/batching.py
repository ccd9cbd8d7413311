"""Slice ``batching``: ids of concurrent requests share full ``videos.list`` calls (``--video-wrappers batch``).

Its entry ``batch`` in the core's ``video_wrappers`` slot puts a ``BatchingSource``
(``interpreters/videos/batching.py``) around the video client: the ids every request asks for
within ``INFLUENCER_STATS_BATCH_WINDOW_MS`` of the first go together, 50 to a call. Without this
slice each request makes its own calls, and the profiles naming ``batch`` (``youtube``,
``distributed``) are not offered. The setting stays in the core (read by nothing without it).
"""

from __future__ import annotations

from influencer_stats.algebras import VideoStatsSource
from influencer_stats.bootstrap.slices.slice import Slice
from influencer_stats.bootstrap.videos import VIDEO_WRAPPERS
from influencer_stats.bootstrap.wiring import Wiring

SLICE = Slice(
    "batching",
    "ids of concurrent requests share full videos.list calls (--video-wrappers batch)",
    files=("influencer_stats/interpreters/videos/batching.py", "tests/unit/test_batching.py"),
    modules=("influencer_stats.interpreters.videos.batching", "influencer_stats.bootstrap.slices.batching"),
)


@VIDEO_WRAPPERS.add(
    "batch",
    "ids of concurrent requests share full videos.list calls (INFLUENCER_STATS_BATCH_WINDOW_MS)",
    scenario="concurrent",
)
async def _batch(wiring: Wiring, inner: VideoStatsSource) -> VideoStatsSource:
    from influencer_stats.interpreters.videos.batching import BatchingSource
    from influencer_stats.interpreters.youtube.youtube_api import MAX_IDS_PER_CALL

    settings = wiring.settings
    if settings.batch_window_ms == 0:
        return inner  # off
    return BatchingSource(
        inner, wiring.metrics, window_s=settings.batch_window_ms / 1000, max_ids=MAX_IDS_PER_CALL
    )
