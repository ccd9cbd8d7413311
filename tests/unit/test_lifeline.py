"""The lifeline's parts without a server: the watchdog's account of beats (a fake clock, no sleeps),
beats from an event loop reaching the parent's socket with the kernel's pid, and the watch thread."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import uuid

import pytest

from influencer_stats.serving.lifeline import Heartbeats, Lifeline, Watch, Watchdog, silence
from influencer_stats.setting_kinds import Choices
from influencer_stats.settings import Settings

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="the heartbeat socket is Linux's")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _lifeline(timeout_s: float = 10.0) -> Lifeline:
    return Lifeline(f"\0influencer-stats-test:{uuid.uuid4()}", timeout_s, graceful_s=1.0)


def test_a_worker_silent_for_the_timeout_is_named_with_how_long() -> None:
    clock = Clock()
    beats = Heartbeats(10.0, clock)
    beats.beat(11)
    beats.beat(12)

    clock.now += 9.5
    before = beats.silent([11, 12])
    beats.beat(12)
    clock.now += 0.5

    assert before is None
    assert beats.silent([11, 12]) == (11, 10.0)


def test_each_beat_restarts_the_timer_so_a_busy_worker_that_beats_is_never_judged() -> None:
    clock = Clock()
    beats = Heartbeats(10.0, clock)
    judged = []

    for _ in range(100):  # 990 s of beats 9.9 s apart: each one in time
        beats.beat(11)
        clock.now += 9.9
        judged.append(beats.silent([11]))

    assert judged == [None] * 100


def test_a_worker_that_never_beat_is_not_judged_and_a_pid_not_watched_is_forgotten() -> None:
    clock = Clock()
    beats = Heartbeats(1.0, clock)
    beats.beat(11)  # say it ended, or it is none of ours: no longer (or never) watched

    clock.now += 60
    unwatched = beats.silent([12])  # 12 is watched but has not beaten yet
    beats.beat(12)
    clock.now += 0.5

    assert unwatched is None
    assert beats.silent([11, 12]) is None  # 11's old beat was forgotten, not judged now


def test_a_worker_beats_at_least_four_times_within_the_timeout_and_at_most_once_a_second() -> None:
    assert _lifeline(10.0).interval_s == 1.0
    assert _lifeline(2.0).interval_s == 0.5


def test_both_sides_build_the_same_lifeline_from_the_settings() -> None:
    settings = Settings(choices=Choices({}), port=9123, worker_timeout_s=3.0, graceful_shutdown_s=7.0)

    lifeline = Lifeline.of(settings)

    assert (lifeline.timeout_s, lifeline.graceful_s) == (3.0, 7.0)
    assert lifeline == Lifeline.of(settings)
    if sys.platform == "linux":  # the address's name, as serving.address claims it
        assert lifeline.address == "\0influencer-stats-lifeline:127.0.0.1:9123"


@linux_only
async def test_beats_from_an_event_loop_reach_the_watchdog_under_the_senders_pid() -> None:
    lifeline = _lifeline(10.0)
    clock = Clock()
    watchdog = Watchdog.open(lifeline, clock)
    stop_beating = lifeline.beat_on(asyncio.get_running_loop())
    try:
        await asyncio.sleep(0)  # the first beat is sent on the loop's next turn
        watchdog.receive(5.0)  # it is waiting already: returns at once
        clock.now += 10.0

        assert watchdog.heartbeats.silent([os.getpid()]) == (os.getpid(), 10.0)
    finally:
        stop_beating()
        watchdog.close()


@linux_only
def test_a_second_watchdog_cannot_take_the_name_of_a_running_one() -> None:
    lifeline = _lifeline()
    first = Watchdog.open(lifeline)
    try:
        with pytest.raises(OSError, match="in use"):
            Watchdog.open(lifeline)
    finally:
        first.close()


def test_the_watch_thread_reports_the_first_silent_worker_once_and_ends() -> None:
    clock = Clock()
    watchdog = Watchdog(Heartbeats(2.0, clock), receiver=None)
    watchdog.heartbeats.beat(11)
    watchdog.heartbeats.beat(12)
    clock.now += 1.0
    watchdog.heartbeats.beat(12)
    clock.now += 1.5  # 11 silent for 2.5 s, 12 for 1.5 s
    reported: list[tuple[int, float]] = []
    ended = threading.Event()

    def on_silent(pid: int, seconds: float) -> None:
        reported.append((pid, seconds))
        ended.set()

    watch = Watch(watchdog, lambda: [11, 12], on_silent)
    watch.start()
    ended.wait(10.0)
    watch.stop()

    assert reported == [(11, 2.5)]
    assert silence(11, 2.5) == (
        "worker 11 stopped answering (its event loop did not beat for 2.5 s); killed it"
    )


def test_a_watch_stopped_before_it_judges_calls_no_one() -> None:
    clock = Clock()
    watchdog = Watchdog(Heartbeats(2.0, clock), receiver=None)
    watchdog.heartbeats.beat(11)
    clock.now += 60
    reported: list[int] = []
    watch = Watch(watchdog, lambda: [11], lambda pid, _: reported.append(pid))

    watch.stop()  # before its thread looks: it ends without judging
    watch.start()
    watch.stop()

    assert reported == []


@linux_only
def test_stopping_a_watch_wakes_it_at_once_and_leaves_the_watchdog_to_close() -> None:
    watchdog = Watchdog.open(_lifeline(10.0))
    try:
        watch = Watch(watchdog, list, lambda pid, _: None)
        watch.start()
        watch.stop()  # it waits for beats up to 0.2 s at a time: the wake ends that wait

        assert "watchdog" not in [thread.name for thread in threading.enumerate()]
    finally:
        watchdog.close()


@linux_only
def test_a_worker_that_cannot_start_tells_the_watchdog_why_and_exits_with_the_code() -> None:
    from influencer_stats.bootstrap.startup import CONFIGURATION, StartupError

    lifeline = _lifeline()
    watchdog = Watchdog.open(lifeline)
    try:
        assert watchdog.failed_to_start() is None  # nothing said yet
        child = os.fork()
        if child == 0:  # the worker: says why, exits at once
            lifeline.failed(
                StartupError(
                    "db_path", "/x/y.db", "cannot create folder /x: Permission denied", CONFIGURATION
                )
            )
        _, status = os.waitpid(child, 0)

        assert os.waitstatus_to_exitcode(status) == CONFIGURATION
        assert watchdog.failed_to_start() == (
            "INFLUENCER_STATS_DB=/x/y.db: cannot create folder /x: Permission denied",
            CONFIGURATION,
        )
    finally:
        watchdog.close()
