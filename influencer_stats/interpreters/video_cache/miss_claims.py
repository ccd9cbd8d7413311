"""Which worker calls for a video that several miss at once: the first to claim it.

Workers sharing a per-video cache (Redis) share its entries and its stale
queue, but each batches and single-flights only its own misses. At a cold
start every worker misses the same popular videos in the same second, and each
spent a unit on them. A claim says "this worker is fetching it now": a worker
that misses a video another claimed waits for that worker's entry instead
(:class:`SharedMisses`), and calls for it itself only if the entry does not
come (that worker's call failed, or it took longer than the wait).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

from influencer_stats.algebras.video_cache import MissClaims
from influencer_stats.domain.models import VideoEntry, VideoId
from influencer_stats.interpreters.video_cache.video_entries import MemoryVideoEntries


@dataclass(slots=True)
class MemoryMissClaims:
    """``MissClaims`` in one process, for workers modelled in one (tests): share ``entries`` and
    ``held``, one instance per worker. Claims lapse ``hold_s`` after they were made, by ``clock``."""

    clock: Callable[[], float]
    hold_s: float
    entries: MemoryVideoEntries
    held: dict[VideoId, tuple[object, float]] = field(default_factory=dict)

    async def claim(self, ids: Sequence[VideoId], now: float, fresh_s: float) -> list[VideoId]:
        held, others = self.held, []
        stored = await self.entries.get_many(ids)
        for video_id in ids:
            owner, until = held.get(video_id, (self, now))
            entry = stored.get(video_id)
            if (owner is not self and until > now) or (entry is not None and now - entry.stored_at < fresh_s):
                others.append(video_id)
            else:
                held[video_id] = (self, now + self.hold_s)
        return others

    async def release(self, ids: Sequence[VideoId]) -> None:
        held = self.held
        for video_id in ids:
            if held.get(video_id, (None, 0.0))[0] is self:
                del held[video_id]

    async def settled(self, ids: Sequence[VideoId]) -> Mapping[VideoId, VideoEntry | None]:
        now, held = self.clock(), self.held
        gone = [i for i in ids if held.get(i, (None, now))[1] <= now]
        entries = await self.entries.get_many(gone)
        return {i: entries.get(i) for i in gone}


@dataclass(slots=True, eq=False)
class _Waiter:
    ids: tuple[VideoId, ...]
    fresh_s: float
    done: asyncio.Future[dict[VideoId, VideoEntry]]
    settled: dict[VideoId, VideoEntry | None] = field(default_factory=dict)
    call_off: Callable[[], None] | None = None  # its timer's


#: ``later(seconds, callback)``: call ``callback`` once ``seconds`` have passed; returns what calls it off.
Later = Callable[[float, Callable[[], None]], Callable[[], None]]


class SharedMisses:
    """The misses of workers sharing a per-video cache: claimed by the first, waited for by the rest.

    ``claim`` and ``release`` go to ``claims`` (``MissClaims``). ``wait`` waits
    for the videos other workers are calling for: one read of
    ``claims.settled`` every ``poll_s`` for all the waiters of this process
    (however many requests wait, one read, of the ids not settled yet), until
    each waiter's ids are settled or it has waited ``wait_s``. That bound is a
    timer of its own, not a count of reads: a read that hangs (Redis stalled)
    does not hold a waiter past it. A waiter gets the entries stored fresh
    (younger than its ``fresh_s`` by ``clock``); its caller calls for the
    others. Bounded: never more than ``max_ids`` ids waited for at once (a
    waiter beyond them gets nothing at once). ``sleep`` and ``later`` are
    injected, so tests drive polls and timers by hand.
    """

    def __init__(
        self,
        claims: MissClaims,
        clock: Callable[[], float],
        *,
        poll_s: float,
        wait_s: float,
        max_ids: int,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        later: Later | None = None,
    ) -> None:
        self._claims = claims
        self._clock = clock
        self._poll_s = poll_s
        self._wait_s = wait_s
        self._max_ids = max_ids
        self._sleep = sleep
        self._later = later
        self._waiters: list[_Waiter] = []
        self._waited = 0  # ids of the waiters
        self._poller: asyncio.Task[None] | None = None

    async def claim(self, ids: Sequence[VideoId], now: float, fresh_s: float) -> list[VideoId]:
        """Claim ``ids`` for this worker; the ones another worker claimed or stored fresh meanwhile."""
        return await self._claims.claim(ids, now, fresh_s)

    async def release(self, ids: Sequence[VideoId]) -> None:
        """Give up this worker's claims on ``ids``."""
        await self._claims.release(ids)

    async def wait(self, ids: Sequence[VideoId], fresh_s: float) -> Mapping[VideoId, VideoEntry]:
        """The entries of ``ids`` stored fresh before the wait ends (some may lack)."""
        if not ids or self._waited + len(ids) > self._max_ids:
            return {}
        loop = asyncio.get_running_loop()
        waiter = _Waiter(tuple(ids), fresh_s, loop.create_future())
        expire = partial(self._expired, waiter)
        waiter.call_off = (
            self._later(self._wait_s, expire) if self._later else loop.call_later(self._wait_s, expire).cancel
        )
        self._waiters.append(waiter)
        self._waited += len(ids)
        if self._poller is None:
            self._poller = asyncio.create_task(self._poll(), name="video-cache:shared-misses")
        return await asyncio.shield(waiter.done)  # a caller that goes away leaves the poll be

    async def _poll(self) -> None:
        try:
            while self._waiters:
                await self._sleep(self._poll_s)
                lacking = {i: None for w in self._waiters for i in w.ids if i not in w.settled}
                read = await self._claims.settled(list(lacking))
                waiting = []
                for waiter in self._waiters:  # those whose wait did not end during the read
                    waiter.settled.update((i, read[i]) for i in waiter.ids if i in read)
                    if len(waiter.settled) == len(waiter.ids):
                        self._done(waiter)
                    else:
                        waiting.append(waiter)
                self._waiters = waiting
        finally:
            self._poller = None
            for waiter in self._waiters:  # cancelled (the loop closing): nobody waits forever
                self._done(waiter)
            self._waiters = []

    def _expired(self, waiter: _Waiter) -> None:
        if waiter in self._waiters:
            self._waiters.remove(waiter)
            self._done(waiter)

    def _done(self, waiter: _Waiter) -> None:
        self._waited -= len(waiter.ids)
        if waiter.call_off is not None:
            waiter.call_off()
        if not waiter.done.done():
            now = self._clock()
            fresh = {
                i: e
                for i, e in waiter.settled.items()
                if e is not None and now - e.stored_at < waiter.fresh_s
            }
            waiter.done.set_result(fresh)
