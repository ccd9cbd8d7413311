"""Slice ``batching``: up to 50 ids a ``videos.list`` call (``--video-client *-batched``,
``--video-wrappers batch``).

Beside each YouTube client of one id per call (``aiohttp``, and ``httpx`` with its slice) it
registers its batched twin (``aiohttp-batched``): the same library, the YouTube base's
``batched`` option, up to 50 ids a call, which ``videos.ids_per_call`` reports to the video
cache (refresh-ahead and the stale queue fill calls to 50). Its entry ``batch`` in the core's
``video_wrappers`` slot puts a ``BatchingSource`` (``interpreters/videos/batching.py``) around
the video client: the ids every request asks for within ``INFLUENCER_STATS_BATCH_WINDOW_MS`` of
the first go together, 50 to a call, and among other requests (or while the YouTube client's call
gate is busy) a call not full waits up to ``INFLUENCER_STATS_BATCH_FILL_MS`` to fill. Without this slice each id is a call of its own
(``ids_per_call`` is 0: the video cache refreshes nothing ahead), and the profiles naming a
batched client or ``batch`` (``fast``, ``youtube``, ``distributed``) are not offered. The
setting stays in the core (read by nothing without it).
"""

from __future__ import annotations

from influencer_stats.algebras import VideoStatsSource
from influencer_stats.bootstrap.slices.slice import Slice
from influencer_stats.bootstrap.videos import (
    VIDEO_WRAPPERS,
    HttpClient,
    add_youtube_client,
    built_gate,
    for_each_youtube_client,
)
from influencer_stats.bootstrap.wiring import Wiring

SLICE = Slice(
    "batching",
    "up to 50 ids a videos.list call: the *-batched clients and the batch wrapper",
    files=(
        "influencer_stats/interpreters/videos/batching.py",
        "tests/unit/test_batching.py",
        "tests/unit/test_batching_fill.py",
        "tests/unit/test_batched_clients.py",
    ),
    modules=("influencer_stats.interpreters.videos.batching", "influencer_stats.bootstrap.slices.batching"),
)


@VIDEO_WRAPPERS.add(
    "batch",
    "ids of concurrent requests share full videos.list calls (INFLUENCER_STATS_BATCH_WINDOW_MS, _FILL_MS)",
    scenario="concurrent",
)
async def _batch(wiring: Wiring, inner: VideoStatsSource) -> VideoStatsSource:
    from influencer_stats.interpreters.videos.batching import BatchingSource
    from influencer_stats.interpreters.youtube.youtube_api import MAX_IDS_PER_CALL

    settings = wiring.settings
    if settings.batch_window_ms == 0:
        return inner  # off
    window_s = settings.batch_window_ms / 1000
    fill_s = max(window_s, settings.batch_fill_ms / 1000) if settings.batch_fill_ms else 0.0
    gate = built_gate(wiring)  # a YouTube client's: it says when YouTube is busy
    return BatchingSource(
        inner,
        wiring.metrics,
        window_s=window_s,
        max_ids=MAX_IDS_PER_CALL,
        fill_s=fill_s,
        busy=gate.busy if gate is not None else None,
        freed=gate.freed if gate is not None else None,
    )


def _batched_twin(name: str, library: HttpClient) -> None:
    """``NAME-batched`` beside the client ``name`` (named for its library): up to 50 ids a call."""
    add_youtube_client(f"{name}-batched", library, f"{name}, up to 50 ids per videos.list call", batched=True)


for_each_youtube_client(_batched_twin)
