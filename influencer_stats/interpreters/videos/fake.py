"""Offline, deterministic video statistics."""

from __future__ import annotations

from collections.abc import Sequence

from returns.result import Result, Success

from influencer_stats.domain.models import UpstreamError, VideoBatch, VideoId, VideoStats
from influencer_stats.interpreters.videos.synthetic import is_unknown, synthetic_stats


class FakeVideoStatsSource:
    """``VideoStatsSource`` that needs no network and no API key.

    Stats are derived from a digest of the id (same id, same numbers, in every
    process); ids starting with ``X`` are reported missing. The default
    profile's source, and the hermetic source of the tests. ``calls``
    counts fetches, for tests.
    """

    def __init__(self) -> None:
        self.calls = 0

    async def fetch(self, ids: Sequence[VideoId]) -> Result[VideoBatch, UpstreamError]:
        self.calls += 1
        stats: dict[VideoId, VideoStats] = {}
        missing: list[VideoId] = []
        for video_id in ids:
            if is_unknown(video_id):
                missing.append(video_id)
            else:
                stats[video_id] = synthetic_stats(video_id)
        return Success(VideoBatch(stats, tuple(missing)))
