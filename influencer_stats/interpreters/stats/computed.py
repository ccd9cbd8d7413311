"""Statistics computed on every call."""

from __future__ import annotations

from collections.abc import Sequence

from returns.result import Result, Success

from influencer_stats.algebras import CollectionStore, EventLog, VideoStatsSource
from influencer_stats.domain.models import (
    CacheInfo,
    CollectionId,
    StatsAnswer,
    StatsError,
    UpstreamError,
    VideoBatch,
    VideoId,
)
from influencer_stats.logic.service import get_stats


class ComputedStats:
    """``CollectionStatsQuery`` that runs ``logic.get_stats`` for every request.

    With ``ages`` (the root sets it when a video cache is in the source's
    stack), an answer built from cached videos says so: its ``cache`` is the
    batch's, the oldest video's freshness. Without it nothing is watched.
    """

    def __init__(
        self, store: CollectionStore, source: VideoStatsSource, log: EventLog, *, ages: bool
    ) -> None:
        self._store = store
        self._source = source
        self._log = log
        self._ages = ages

    async def stats(self, collection_id: CollectionId) -> Result[StatsAnswer, StatsError]:
        if not self._ages:
            return (await get_stats(collection_id, self._store, self._source, self._log)).map(StatsAnswer)
        watched = _Watched(self._source)
        outcome = await get_stats(collection_id, self._store, watched, self._log)
        return outcome.map(lambda stats: StatsAnswer(stats, watched.cache))

    async def invalidate(self, collection_id: CollectionId) -> None:
        """Nothing is kept, so nothing to forget."""


class _Watched:
    """The source, remembering how a cache served the batch it returned."""

    __slots__ = ("cache", "source")

    def __init__(self, source: VideoStatsSource) -> None:
        self.source = source
        self.cache: CacheInfo | None = None

    async def fetch(self, ids: Sequence[VideoId]) -> Result[VideoBatch, UpstreamError]:
        outcome = await self.source.fetch(ids)
        if isinstance(outcome, Success):
            self.cache = outcome.unwrap().cache
        return outcome
