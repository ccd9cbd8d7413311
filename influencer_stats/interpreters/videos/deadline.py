"""The request's deadline, around a video source that no per-video cache answers for."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from returns.result import Failure, Result

from influencer_stats.algebras import VideoStatsSource
from influencer_stats.domain.models import UpstreamError, UpstreamTimeout, VideoBatch, VideoId
from influencer_stats.interpreters.youtube.call_gate import own_flow


class DeadlineSource:
    """``VideoStatsSource`` wrapper that bounds each fetch by ``deadline_s``; the outermost layer.

    A fetch still running at the deadline is cancelled and fails with
    ``UpstreamTimeout``: the calls it was waiting for a connection for are
    never made (no unit spent), and one in flight is abandoned (nothing could
    keep its answer). Each fetch is a flow of its own for the call gate below
    (``call_gate.own_flow``). With a per-video cache the root builds none:
    that cache bounds its callers' waits itself and keeps what calls bring
    after a caller has gone.
    """

    def __init__(self, inner: VideoStatsSource, deadline_s: float) -> None:
        self._inner = inner
        self._deadline_s = deadline_s

    async def fetch(self, ids: Sequence[VideoId]) -> Result[VideoBatch, UpstreamError]:
        with own_flow():
            try:
                async with asyncio.timeout(self._deadline_s):
                    return await self._inner.fetch(ids)
            except TimeoutError:
                return Failure(timed_out(self._deadline_s))


def timed_out(deadline_s: float) -> UpstreamTimeout:
    """The failure of a request that got no complete answer within its deadline."""
    return UpstreamTimeout(f"no complete answer within the {deadline_s:g}s deadline")
