"""The snapshotter on a manual clock, a dict store and the scripted stats query: no sleeps."""

from __future__ import annotations

import asyncio

import pytest
from returns.result import Success

from influencer_stats.algebras.history import DAY_S
from influencer_stats.domain.history import StatsPoint
from influencer_stats.domain.models import (
    CacheInfo,
    CollectionId,
    CollectionNotFound,
    UpstreamUnavailable,
)
from influencer_stats.interpreters.collections.memory_dict import DictCollectionStore
from influencer_stats.interpreters.history.memory import MemoryStatsHistory
from influencer_stats.interpreters.history.retention import Retention
from influencer_stats.logic.snapshots import Pass, Snapshotter
from influencer_stats.testing.clock import ManualClock
from influencer_stats.testing.event_log import CapturingEventLog
from influencer_stats.testing.stats_query import ScriptedStatsQuery, stats_of

ONE, TWO, THREE = CollectionId("one"), CollectionId("two"), CollectionId("three")
HOUR = 3_600.0
START = 1_700_006_400.0


class EnoughError(Exception):
    """Ends ``run``'s loop from its injected sleep."""


class Setup:
    def __init__(self, *, short: bool = False, page: int = 500) -> None:
        self.store = DictCollectionStore()
        self.stats = ScriptedStatsQuery()
        self.history = MemoryStatsHistory(Retention(raw_s=30 * DAY_S, keep_s=400 * DAY_S), 100)
        self.clock = ManualClock(START)
        self.log = CapturingEventLog()
        self.short = short
        self.snapshotter = Snapshotter(
            self.store,
            self.stats,
            self.history,
            self.log,
            interval_s=HOUR,
            clock=self.clock,
            short=lambda: self.short,
            sleep=self.sleep,
            page=page,
        )
        self.slept: list[float] = []
        self.early = 0.0  # how much sooner the next sleep ends than asked

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.clock.now += seconds - self.early
        self.early = 0.0
        if len(self.slept) >= 2:
            raise EnoughError  # two intervals are enough

    async def points(self, collection: CollectionId) -> tuple[StatsPoint, ...]:
        result = await self.history.points(collection, 0.0, 2e12, 100)
        assert isinstance(result, Success)
        points: tuple[StatsPoint, ...] = result.unwrap()
        return points


def point(at: float, n: int) -> StatsPoint:
    stats = stats_of(n)
    return StatsPoint(at, stats.impressions, stats.engagements, stats.score, stats.videos, 0)


async def test_a_pass_records_every_collection_once_across_pages() -> None:
    setup = Setup(page=2)
    for collection in (ONE, TWO, THREE):
        await setup.store.save(collection, ())

    done = await setup.snapshotter.take(7)

    assert done == Pass(recorded=3)
    assert [await setup.points(c) for c in (ONE, TWO, THREE)] == [(point(START, 1),)] * 3
    last = setup.log.events[-1]
    assert (last.event, last.fields["recorded"], last.fields["slot"]) == ("history.snapshots", 3, 7)


async def test_a_second_pass_of_the_same_interval_records_nothing_more() -> None:
    setup = Setup()
    await setup.store.save(ONE, ())
    await setup.snapshotter.take(7)
    setup.clock.now += 60

    again = await setup.snapshotter.take(7)

    assert again == Pass(taken_elsewhere=1)
    assert setup.stats.calls == 1


async def test_a_point_is_dated_when_its_figures_were_true() -> None:
    setup = Setup()
    await setup.store.save(ONE, ())
    setup.stats.below = CacheInfo(True, 90.0, 210.0)  # the answer is 90 s old

    await setup.snapshotter.take(7)

    assert await setup.points(ONE) == (point(START - 90, 1),)


async def test_a_short_budget_records_a_gap_without_asking_for_stats() -> None:
    setup = Setup(short=True)
    await setup.store.save(ONE, ())

    done = await setup.snapshotter.take(7)

    assert done == Pass(gaps=1)
    assert setup.stats.calls == 0
    assert await setup.points(ONE) == (StatsPoint(START, 0, 0, 0, 0, 0, gap=True),)


async def test_failed_stats_are_a_gap_and_a_collection_deleted_meanwhile_nothing() -> None:
    setup = Setup()
    await setup.store.save(ONE, ())
    setup.stats.failure = UpstreamUnavailable("down")
    assert (await setup.snapshotter.take(7)) == Pass(gaps=1)

    setup.stats.failure = CollectionNotFound(ONE)
    assert (await setup.snapshotter.take(8)) == Pass()
    assert [p.gap for p in await setup.points(ONE)] == [True]


async def test_a_collection_deleted_while_its_snapshot_was_taken_keeps_no_point() -> None:
    setup = Setup()
    await setup.store.save(ONE, ())
    setup.stats.gate = asyncio.Event()
    taking = asyncio.create_task(setup.snapshotter.take(7))
    async with setup.stats.called:
        await setup.stats.called.wait_for(lambda: setup.stats.calls == 1)

    await setup.history.forget(ONE)  # what DELETE does: the history first, then the collection
    await setup.store.delete(ONE)
    setup.stats.gate.set()
    done = await taking

    assert done == Pass()
    assert await setup.points(ONE) == ()


async def test_run_takes_a_pass_at_once_then_at_the_start_of_each_interval() -> None:
    setup = Setup()
    setup.clock.now = START + 1_000  # 1,000 s into an interval
    await setup.store.save(ONE, ())

    with pytest.raises(EnoughError):
        await setup.snapshotter.run()

    assert setup.slept == [HOUR - 1_000, HOUR]
    assert [p.at for p in await setup.points(ONE)] == [START + 1_000, START + HOUR]


async def test_a_sleep_that_ends_early_takes_no_interval_twice() -> None:
    setup = Setup()
    await setup.store.save(ONE, ())
    setup.early = 0.002  # the event loop woke 2 ms before the interval began

    with pytest.raises(EnoughError):
        await setup.snapshotter.run()

    # The second interval is taken 2 ms early, once; the next sleep waits for the third.
    assert setup.slept == [HOUR, pytest.approx(HOUR + 0.002)]
    assert setup.stats.calls == 2
