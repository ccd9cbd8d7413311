"""Stats history: snapshots of each collection's stats over time."""

from __future__ import annotations

from typing import Protocol

from returns.result import Result

from influencer_stats.domain.history import StatsPoint
from influencer_stats.domain.models import DAY_S, CollectionId, StoreUnavailable

__all__ = ["DAY_S", "StatsHistory"]  # DAY_S: the width of a downsampled step, one point per UTC day


class StatsHistory(Protocol):
    """Points of each collection's stats, by time, kept within a retention.

    Contract (checked by ``tests/contract/test_stats_history.py``):

    - ``record(collection_id, point)`` keeps ``point``; a point at the same
      ``at`` as one kept replaces it. Then, for that collection, it applies the
      retention the interpreter was built with, counted back from ``point.at``:
      points older than ``raw_s`` are kept one per UTC day (``DAY_S``), the
      day's last point that is not a gap (its last gap when all are), and
      points older than ``keep_s`` are dropped. So a history holds at most
      ``raw_s / interval`` raw points plus one per day for ``keep_s``.
    - ``points(collection_id, since, until, limit)`` is at most ``limit`` (>= 1)
      points with ``since <= at < until``, oldest first; fewer only when no
      more are in the range, so the next page starts just after the last
      ``at``. An unknown collection has no points (not an error).
    - ``thinned(collection_id, since, until, step, limit)`` is one point per
      step (``step`` >= 1 whole seconds) with ``since <= at < until``: the points
      are grouped by ``at // step * step`` and each group gives its last point
      that is not a gap (its last gap when all are), oldest first, at most
      ``limit`` (>= 1) groups, fewer only when no more are in the range. Its work
      grows with the groups answered, not with the points they hold (a year of
      points at ``step=1d`` is a few hundred seeks, not a scan).
    - ``forget(collection_id)`` drops every point of the collection, and its claim.
    - ``claim(collection_id, slot)`` is ``Success(True)`` for the first caller
      to claim taking the collection's snapshot of interval ``slot`` (a whole
      number counting intervals), ``Success(False)`` for every later one and
      for an earlier slot than one claimed: with several workers or hosts on a
      shared backend, one snapshot per collection per interval.
    - A history that cannot reach its backend returns
      ``Failure(StoreUnavailable)`` and never raises for it. Methods are safe
      to call from concurrent tasks; what one ``record`` wrote is seen by every
      later ``points``, in any process sharing the backend.
    """

    async def record(
        self, collection_id: CollectionId, point: StatsPoint
    ) -> Result[None, StoreUnavailable]: ...

    async def points(
        self, collection_id: CollectionId, since: float, until: float, limit: int
    ) -> Result[tuple[StatsPoint, ...], StoreUnavailable]: ...

    async def thinned(
        self, collection_id: CollectionId, since: float, until: float, step: int, limit: int
    ) -> Result[tuple[StatsPoint, ...], StoreUnavailable]: ...

    async def forget(self, collection_id: CollectionId) -> Result[None, StoreUnavailable]: ...

    async def claim(self, collection_id: CollectionId, slot: int) -> Result[bool, StoreUnavailable]: ...
