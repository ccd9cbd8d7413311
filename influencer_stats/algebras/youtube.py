"""One ``videos.list`` call, the step the YouTube source is built of (quota counted per call)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from returns.result import Result

from influencer_stats.domain.models import StatsByVideo, UpstreamError, VideoId


class VideosListCall(Protocol):
    """One ``videos.list`` request for at most 50 distinct ids.

    Returns the stats of the ids the API returned (absent ones are simply not
    keys) or the classified failure. Transport errors become
    ``UpstreamUnavailable``; it raises only on cancellation (timeouts are
    applied around it, by the caller).
    """

    async def __call__(self, ids: Sequence[VideoId]) -> Result[StatsByVideo, UpstreamError]: ...
