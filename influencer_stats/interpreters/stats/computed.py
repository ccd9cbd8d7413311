"""Statistics computed on every call."""

from __future__ import annotations

from returns.result import Result

from influencer_stats.algebras import CollectionStore, EventLog, VideoStatsSource
from influencer_stats.logic.models import CollectionId, StatsAnswer, StatsError
from influencer_stats.logic.service import get_stats


class ComputedStats:
    """``CollectionStatsQuery`` that runs ``logic.get_stats`` for every request."""

    def __init__(self, store: CollectionStore, source: VideoStatsSource, log: EventLog) -> None:
        self._store = store
        self._source = source
        self._log = log

    async def stats(self, collection_id: CollectionId) -> Result[StatsAnswer, StatsError]:
        return (await get_stats(collection_id, self._store, self._source, self._log)).map(StatsAnswer)

    async def invalidate(self, collection_id: CollectionId) -> None:
        """Nothing is kept, so nothing to forget."""
