"""Claims of one interval's work per collection, in process memory: what the stats history (one
snapshot an interval) and the collection sources (one refresh an interval) share.

A claim of ``slot`` (a whole number counting intervals) is taken by the first caller only, and
never once a later slot was claimed: ``True`` for that caller, ``False`` for every other. The Redis
one is ``redis_interval_claims``; a durable store's own may keep them in its database.
"""

from __future__ import annotations

from influencer_stats.domain.models import CollectionId


class LatestClaims:
    """The last slot claimed per collection, for one process, least recently claimed first.

    At most ``bound`` collections: past it, claiming for a new one first forgets the one claimed
    least recently (which may then be claimed again, in its slot: a second run of its work).
    """

    def __init__(self, bound: int) -> None:
        self._bound = bound
        self._claimed: dict[CollectionId, int] = {}

    def claim(self, collection_id: CollectionId, slot: int) -> bool:
        last = self._claimed.pop(collection_id, None)
        if last is not None and last >= slot:
            self._claimed[collection_id] = last
            return False
        while len(self._claimed) >= self._bound:
            del self._claimed[next(iter(self._claimed))]
        self._claimed[collection_id] = slot
        return True

    def forget(self, collection_id: CollectionId) -> None:
        self._claimed.pop(collection_id, None)
