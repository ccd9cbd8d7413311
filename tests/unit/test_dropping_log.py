"""The dropping logger, driven by a fake clock: no sleeps."""

from __future__ import annotations

import asyncio

from influencer_stats.interpreters.logging.dropping import DroppingEventLog
from influencer_stats.testing.clock import ManualClock
from influencer_stats.testing.event_log import CapturingEventLog


def test_events_under_the_limit_are_written_on_flush_not_on_the_call() -> None:
    inner, clock = CapturingEventLog(), ManualClock(1000.0)
    log = DroppingEventLog(inner, clock, limit=3, level="debug")

    log.info("a", n=1)
    log.error("b")

    assert inner.events == []
    assert log.flush() == 2
    assert [(e.level, e.event, e.fields) for e in inner.events] == [
        ("info", "a", {"n": 1}),
        ("error", "b", {}),
    ]


def test_events_over_the_limit_in_one_window_are_dropped_and_reported_once() -> None:
    inner, clock = CapturingEventLog(), ManualClock(1000.0)
    log = DroppingEventLog(inner, clock, limit=3, level="debug", window=1.0)

    for i in range(10):
        log.info("tick", i=i)
    log.flush()
    clock.now += 1.0
    log.flush()

    assert [e.fields["i"] for e in inner.named("tick")] == [0, 1, 2]
    [report] = inner.named("log.events_dropped")
    assert report.fields == {"dropped": 7, "window_s": 1.0}
    assert log.dropped_total == 7


def test_a_new_window_admits_events_again() -> None:
    inner, clock = CapturingEventLog(), ManualClock(1000.0)
    log = DroppingEventLog(inner, clock, limit=2, level="debug", window=1.0)

    for _ in range(5):
        log.info("first")
    log.flush()
    clock.now += 1.5
    for _ in range(5):
        log.info("second")
    log.flush()

    assert len(inner.named("first")) == 2
    assert len(inner.named("second")) == 2
    assert [e.fields["dropped"] for e in inner.named("log.events_dropped")] == [3]


def test_the_buffer_never_holds_more_than_the_limit_even_if_nobody_flushes() -> None:
    inner, clock = CapturingEventLog(), ManualClock(1000.0)
    log = DroppingEventLog(inner, clock, limit=100, level="debug", window=1.0, capacity=150)

    for second in range(50):
        clock.now = 1000.0 + second
        for _ in range(1_000):
            log.debug("flood")
    clock.now += 1.0

    assert log.flush() <= 150
    clock.now += 1.0
    log.flush()
    written = len(inner.named("flood"))
    reported = sum(int(str(e.fields["dropped"])) for e in inner.named("log.events_dropped"))
    assert written + log.dropped_total == 50 * 1_000
    assert reported == log.dropped_total


async def test_the_flusher_writes_on_its_own_task_and_flushes_what_is_left_when_cancelled() -> None:
    inner, clock = CapturingEventLog(), ManualClock(1000.0)
    log = DroppingEventLog(inner, clock, limit=10, level="debug")
    ticks: asyncio.Queue[None] = asyncio.Queue(maxsize=1)
    flushed = asyncio.Event()

    async def controlled_sleep(_: float) -> None:
        if inner.events:
            flushed.set()
        await ticks.put(None)

    log.info("before")
    task = asyncio.create_task(log.run_flusher(sleep=controlled_sleep))
    await ticks.get()  # first sleep returned -> flush ran
    await ticks.get()
    assert flushed.is_set()
    log.info("after")
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)

    assert [e.event for e in inner.events] == ["before", "after"]


def test_events_below_its_level_are_ignored_neither_admitted_nor_counted_as_dropped() -> None:
    inner = CapturingEventLog()
    log = DroppingEventLog(inner, ManualClock(1000.0), limit=2, level="info")

    log.debug("quiet")
    log.debug("quieter")
    log.info("one")
    log.error("two")
    log.flush()

    assert [(e.event, e.level) for e in inner.events] == [("one", "info"), ("two", "error")]
    assert log.dropped_total == 0
