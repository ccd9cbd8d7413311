"""Statistics of a collection, by id: the use case as a swappable capability."""

from __future__ import annotations

from typing import Protocol

from returns.result import Result

from influencer_stats.domain.models import CollectionId, StatsAnswer, StatsError


class CollectionStatsQuery(Protocol):
    """The statistics of one collection.

    The use case satisfies it (``logic.service.GetStats``, computing them on
    every call); wrappers add caching without the logic or the HTTP edge
    changing.

    Contract: after a write or delete of a collection has been acknowledged,
    no answer reflects the collection as it was before it (read-your-writes);
    answers served from a cache, whether of stats or of videos, say so in
    ``StatsAnswer.cache``. Failures are the ``StatsError`` values of
    ``GetStats``. Safe for concurrent tasks.
    """

    async def stats(self, collection_id: CollectionId) -> Result[StatsAnswer, StatsError]: ...

    async def invalidate(self, collection_id: CollectionId) -> None:
        """Forget anything known about this collection (called after each of its writes)."""
        ...
