"""A stats history in process memory: one process, gone at exit."""

from __future__ import annotations

from bisect import bisect_left

from returns.result import Result, Success

from influencer_stats.domain.history import StatsPoint
from influencer_stats.domain.models import CollectionId, StoreUnavailable
from influencer_stats.interpreters.history.retention import Retention
from influencer_stats.interpreters.interval_claims import LatestClaims


class MemoryStatsHistory:
    """``StatsHistory`` in a dict of lists, oldest first, for one process (tests, ``demo``).

    Bounded by the retention per collection and by ``max_collections``: past
    it, recording for a new collection first forgets the one recorded least
    recently (what the store no longer holds is the likeliest to go).
    """

    def __init__(self, retention: Retention, max_collections: int) -> None:
        self._retention = retention
        self._max_collections = max_collections
        self._points: dict[CollectionId, list[StatsPoint]] = {}
        self._claims = LatestClaims(max_collections)

    async def record(self, collection_id: CollectionId, point: StatsPoint) -> Result[None, StoreUnavailable]:
        points = self._points.pop(collection_id, [])
        at = bisect_left(points, point.at, key=_at)
        if at < len(points) and points[at].at == point.at:
            points[at] = point
        else:
            points.insert(at, point)
        while len(self._points) >= self._max_collections:
            del self._points[next(iter(self._points))]
        self._points[collection_id] = self._retention.kept(points, point.at)  # last: most recent
        return Success(None)

    async def points(
        self, collection_id: CollectionId, since: float, until: float, limit: int
    ) -> Result[tuple[StatsPoint, ...], StoreUnavailable]:
        points = self._points.get(collection_id, [])
        start = bisect_left(points, since, key=_at)
        return Success(tuple(p for p in points[start : start + limit] if p.at < until))

    async def thinned(
        self, collection_id: CollectionId, since: float, until: float, step: int, limit: int
    ) -> Result[tuple[StatsPoint, ...], StoreUnavailable]:
        points = self._points.get(collection_id, [])
        kept: list[StatsPoint] = []
        at = bisect_left(points, since, key=_at)
        while len(kept) < limit and at < len(points) and points[at].at < until:
            end = min(points[at].at // step * step + step, until)
            after = bisect_left(points, end, key=_at, lo=at)  # the group is points[at:after]
            pick = after - 1  # its last point that is not a gap, else its last
            while pick > at and points[pick].gap:
                pick -= 1
            kept.append(points[after - 1] if points[pick].gap else points[pick])
            at = after
        return Success(tuple(kept))

    async def forget(self, collection_id: CollectionId) -> Result[None, StoreUnavailable]:
        self._points.pop(collection_id, None)
        self._claims.forget(collection_id)
        return Success(None)

    async def claim(self, collection_id: CollectionId, slot: int) -> Result[bool, StoreUnavailable]:
        return Success(self._claims.claim(collection_id, slot))


def _at(point: StatsPoint) -> float:
    return point.at
