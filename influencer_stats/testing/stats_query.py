"""A scripted ``CollectionStatsQuery``, for tests of the wrappers around one (caches)."""

from __future__ import annotations

import asyncio

from returns.result import Failure, Result, Success

from influencer_stats.domain.models import CacheInfo, CollectionId, CollectionStats, StatsAnswer, StatsError


def stats_of(n: int) -> CollectionStats:
    """Recognisable stats: ``impressions`` is ``n``."""
    return CollectionStats(impressions=n, engagements=n, score=2 * n, videos=1, missing=())


class ScriptedStatsQuery:
    """Answers ``stats_of(version)``, where ``version`` stands for what the store holds.

    ``gate`` holds computations until set; ``failure`` makes them fail;
    ``below`` is how a cache under this query served its data (a per-video
    cache's age and freshness left), none by default; every call is counted
    (``called`` is notified) and every invalidation recorded.
    """

    def __init__(self) -> None:
        self.version = 1
        self.calls = 0
        self.called = asyncio.Condition()
        self.gate: asyncio.Event | None = None
        self.failure: StatsError | None = None
        self.below: CacheInfo | None = None
        self.invalidated: list[CollectionId] = []

    async def stats(self, collection_id: CollectionId) -> Result[StatsAnswer, StatsError]:
        async with self.called:
            self.calls += 1
            self.called.notify_all()
        version = self.version  # what the store held when the computation started
        if self.gate is not None:
            await self.gate.wait()
        if self.failure is not None:
            return Failure(self.failure)
        return Success(StatsAnswer(stats_of(version), self.below))

    async def invalidate(self, collection_id: CollectionId) -> None:
        self.invalidated.append(collection_id)
