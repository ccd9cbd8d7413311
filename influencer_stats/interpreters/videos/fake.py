"""Offline, deterministic video statistics."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from returns.result import Result, Success

from influencer_stats.domain.models import UpstreamError, VideoBatch, VideoId, VideoStats
from influencer_stats.interpreters.videos.synthetic import is_unknown, stats_at


def _still() -> float:
    return 0.0


class FakeVideoStatsSource:
    """``VideoStatsSource`` that needs no network and no API key.

    Stats are derived from a digest of the id (same id, same numbers, in every
    process); ids starting with ``X`` are reported missing. They grow with
    time: ``speed`` seconds of the synthetic world pass for each second of
    ``clock`` since this source was built, and each video's counters are
    ``synthetic.stats_at`` that far in (so a demo's history moves; the numbers
    of its first minute are the starting ones). With ``speed`` 0, or without a
    clock, they never change (the tests' source). ``calls`` counts fetches,
    for tests.
    """

    def __init__(self, *, clock: Callable[[], float] = _still, speed: float = 0) -> None:
        self.calls = 0
        self._clock = clock
        self._speed = speed
        self._start = clock()

    def elapsed_s(self) -> float:
        """How long the synthetic world has run: its seconds since this source was built."""
        return max(self._clock() - self._start, 0.0) * self._speed

    async def fetch(self, ids: Sequence[VideoId]) -> Result[VideoBatch, UpstreamError]:
        self.calls += 1
        elapsed_s = self.elapsed_s()
        stats: dict[VideoId, VideoStats] = {}
        missing: list[VideoId] = []
        for video_id in ids:
            if is_unknown(video_id):
                missing.append(video_id)
            else:
                stats[video_id] = stats_at(video_id, elapsed_s)
        return Success(VideoBatch(stats, tuple(missing)))
