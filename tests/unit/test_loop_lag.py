"""The event-loop lag monitor, on a fake clock."""

from __future__ import annotations

import asyncio

from influencer_stats.interpreters.metrics.loop_lag import monitor_loop_lag


async def test_each_overshoot_past_the_interval_is_recorded() -> None:
    now = 0.0
    overshoots = iter([0.0, 0.004, 0.25])
    recorded: list[float] = []

    def clock() -> float:
        return now

    async def sleep(interval: float) -> None:
        nonlocal now
        now += interval + next(overshoots)
        if len(recorded) == 2:
            raise asyncio.CancelledError

    monitor = asyncio.create_task(monitor_loop_lag(recorded.append, 0.1, clock, sleep))
    await asyncio.gather(monitor, return_exceptions=True)

    assert [round(r, 6) for r in recorded] == [0.0, 0.004]
