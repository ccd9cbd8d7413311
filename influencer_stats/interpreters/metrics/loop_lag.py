"""Event-loop lag: how late the loop runs a callback scheduled for a known time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


async def monitor_loop_lag(
    record: Callable[[float], None],
    interval: float = 0.1,
    clock: Callable[[], float] = time.perf_counter,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> None:
    """Sleep ``interval`` again and again and record each overshoot, until cancelled.

    CPU-bound work on the loop delays every request; this makes it visible
    (the Lyft lesson). A histogram keeps the spikes a gauge would overwrite.
    """
    while True:
        started = clock()
        await sleep(interval)
        record(max(0.0, clock() - started - interval))
