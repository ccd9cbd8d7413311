"""One computation per key at a time, shared by every caller, voidable by a write."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


class SingleFlight(Generic[K, T]):
    """Concurrent requests for one key share one computation (one asyncio task).

    - ``run`` awaits the key's computation, starting it if none is in flight;
      the caller is shielded from it, so a caller that goes away (cancelled,
      timed out) does not cancel it for the others. ``start`` starts it without
      waiting (a background refresh).
    - ``void`` (called on every write) detaches the computation in flight:
      later callers start afresh, and the computation, asking ``voided()``,
      knows not to store its answer, which may be from before the write.
    - ``version`` orders computations of one key: a caller joins the one in
      flight only if it started at the caller's version or a later one;
      otherwise the older one is voided and a new one started. Callers that
      have no versions leave it at 0 and always join.

    A computation stays in flight until ``work`` returns, storing included, so
    a caller arriving meanwhile joins it instead of computing again. Tasks are
    created on the running loop and referenced until they finish.
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._in_flight: dict[K, tuple[int, asyncio.Task[T]]] = {}
        self._voided: set[asyncio.Task[T]] = set()  # also keeps them referenced

    async def run(self, key: K, work: Callable[[], Awaitable[T]], version: int = 0) -> T:
        """The outcome of ``key``'s computation in flight, or of ``work()`` started now."""
        return await asyncio.shield(self.start(key, work, version))

    def start(self, key: K, work: Callable[[], Awaitable[T]], version: int = 0) -> asyncio.Task[T]:
        """``key``'s computation in flight (if at ``version`` or later), or ``work()`` started now."""
        flight = self._in_flight.get(key)
        if flight is not None and flight[0] >= version:
            return flight[1]
        if flight is not None:
            self._voided.add(flight[1])  # superseded by a newer write
        task = asyncio.create_task(self._run(key, work), name=f"{self._name}:{key}")
        self._in_flight[key] = (version, task)
        return task

    def void(self, key: K) -> None:
        """Detach ``key``'s computation in flight: later callers start afresh."""
        flight = self._in_flight.pop(key, None)
        if flight is not None:
            self._voided.add(flight[1])

    def void_all(self) -> None:
        """Detach every computation in flight."""
        for key in list(self._in_flight):
            self.void(key)

    def voided(self) -> bool:
        """Whether the computation calling this was voided; only from inside ``work``."""
        return asyncio.current_task() in self._voided

    async def _run(self, key: K, work: Callable[[], Awaitable[T]]) -> T:
        me = asyncio.current_task()
        try:
            return await work()
        finally:
            flight = self._in_flight.get(key)
            if flight is not None and flight[1] is me:
                del self._in_flight[key]
            self._voided.discard(me)
