"""The in-process history's own bound: the collection recorded least recently goes first."""

from __future__ import annotations

from returns.result import Success

from influencer_stats.domain.history import StatsPoint
from influencer_stats.domain.models import CollectionId
from influencer_stats.interpreters.history.memory import MemoryStatsHistory
from influencer_stats.interpreters.history.retention import Retention

A, B, C = CollectionId("a"), CollectionId("b"), CollectionId("c")


def point(at: float) -> StatsPoint:
    return StatsPoint(at, 1, 1, 1, 1, 0)


async def test_past_its_bound_recording_a_new_collection_forgets_the_least_recently_recorded() -> None:
    history = MemoryStatsHistory(Retention(raw_s=100.0, keep_s=1_000.0), max_collections=2)
    await history.record(A, point(1.0))
    await history.record(B, point(1.0))
    await history.record(A, point(2.0))  # A is now the most recent

    await history.record(C, point(3.0))

    assert await history.points(B, 0.0, 10.0, 10) == Success(())
    assert await history.points(A, 0.0, 10.0, 10) == Success((point(1.0), point(2.0)))
    assert await history.points(C, 0.0, 10.0, 10) == Success((point(3.0),))
