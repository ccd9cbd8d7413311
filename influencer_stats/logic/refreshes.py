"""What keeps refreshes of one collection from re-reading its source over and over: one read at a
time per collection (concurrent refreshes share it), and none again within an interval."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)


class SingleFlight(Generic[K, T]):
    """Concurrent ``run(key, work)`` calls of one key share one run of the first caller's ``work``.

    The work runs in a task of its own; each caller waits for it (``asyncio.shield``), so a
    caller that goes away leaves it to the others. When the last caller waiting goes away, the
    work is cancelled (nobody would see what it read), as it was before it was shared. A call
    after the run ended starts a new one. One event loop; not thread-safe.
    """

    def __init__(self) -> None:
        self._flights: dict[K, tuple[asyncio.Future[T], list[int]]] = {}

    def running(self, key: K) -> bool:
        """Whether a run of ``key`` is under way (a call now would join it)."""
        flight = self._flights.get(key)
        return flight is not None and not flight[0].done()

    async def run(self, key: K, work: Callable[[], Awaitable[T]]) -> T:
        flight = self._flights.get(key)
        if flight is None or flight[0].done():
            started = asyncio.ensure_future(work())
            flight = (started, [0])
            self._flights[key] = flight
            started.add_done_callback(lambda _: self._forget(key, started))
        task, waiters = flight
        waiters[0] += 1
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if waiters[0] == 1:  # the last one waiting: nobody would see the result
                task.cancel()
            raise
        finally:
            waiters[0] -= 1

    def _forget(self, key: K, task: asyncio.Future[T]) -> None:
        flight = self._flights.get(key)
        if flight is not None and flight[0] is task:
            del self._flights[key]


class RecentReads(Generic[K]):
    """When each key's source was last read, to refuse reading it again within ``interval_s``.

    ``wait_s(key)`` is how long until it may be read again (0: now); ``read(key)`` notes a read
    at ``clock()`` (monotonic seconds). At most ``max_entries`` keys are kept: the oldest reads
    are forgotten first (they would soon allow a read anyway), so memory stays bounded however
    many collections are read. ``interval_s`` 0 keeps nothing and never refuses.
    """

    def __init__(self, interval_s: float, clock: Callable[[], float], *, max_entries: int = 10_000) -> None:
        if interval_s < 0 or max_entries < 1:
            raise ValueError("interval_s must be >= 0 and max_entries >= 1")
        self._interval_s = interval_s
        self._clock = clock
        self._max_entries = max_entries
        self._read_at: dict[K, float] = {}  # in the order of the reads: oldest first

    def wait_s(self, key: K) -> float:
        at = self._read_at.get(key)
        if at is None:
            return 0.0
        return max(0.0, at + self._interval_s - self._clock())

    def read(self, key: K) -> None:
        if self._interval_s == 0:
            return
        now = self._clock()
        self._read_at.pop(key, None)
        self._read_at[key] = now  # last in order: the newest read
        reads = self._read_at
        if len(reads) > self._max_entries:  # one over at most: it grows a key at a time
            del reads[next(iter(reads))]
        while reads:  # reads older than the interval refuse nothing: dropped, oldest first
            oldest, at = next(iter(reads.items()))
            if at + self._interval_s > now:
                break
            del reads[oldest]
