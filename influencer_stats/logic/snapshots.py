"""The snapshotter: every collection's stats recorded in a history, once per interval."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from returns.result import Failure, Success

from influencer_stats.algebras import CollectionStatsQuery, CollectionStore, EventLog
from influencer_stats.algebras.history import StatsHistory
from influencer_stats.domain.history import StatsPoint
from influencer_stats.domain.models import CollectionId, CollectionNotFound
from influencer_stats.logic.passes import every_collection, every_interval


@dataclass(slots=True)
class Pass:
    """What one pass over the collections did."""

    recorded: int = 0
    gaps: int = 0
    taken_elsewhere: int = 0  # claimed by another worker or host
    failed: int = 0  # the history or the store did not answer


class Snapshotter:
    """Records each collection's stats in ``history`` once per ``interval_s``.

    A pass (``take``) pages through the store's ids and, for each collection
    whose snapshot of the interval it claims (``StatsHistory.claim``: one
    worker or host per collection and interval), asks ``stats`` for its stats
    exactly as a request would: through the stats and video caches, batching
    and the quota governor, so a snapshot never spends quota a fresh cache
    entry could save. The point is dated when its figures were true (now less
    the answer's age). When ``short()`` (the quota budget runs ahead of the
    day) or the stats fail (the upstream, the quota), the point is a gap,
    never invented figures. At most ``concurrency`` collections at a time.
    ``run`` takes a pass at once, then at the start of every interval, until
    cancelled; ``clock`` (wall seconds) and ``sleep`` are injected.
    """

    def __init__(
        self,
        store: CollectionStore,
        stats: CollectionStatsQuery,
        history: StatsHistory,
        log: EventLog,
        *,
        interval_s: float,
        clock: Callable[[], float],
        short: Callable[[], bool],
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        page: int = 500,
        concurrency: int = 4,
    ) -> None:
        self._store = store
        self._stats = stats
        self._history = history
        self._log = log
        self._interval_s = interval_s
        self._clock = clock
        self._short = short
        self._sleep = sleep
        self._page = page
        self._concurrency = concurrency

    async def run(self) -> None:
        await every_interval(self._interval_s, self._clock, self._sleep, self.take)

    async def take(self, slot: int) -> Pass:
        """One pass: the snapshot of interval ``slot`` of every collection this process claims."""
        done = Pass()

        async def snapshot(collection_id: CollectionId) -> None:
            await self._one(collection_id, slot, done)

        if not await every_collection(self._store, snapshot, concurrency=self._concurrency, page=self._page):
            done.failed += 1
        self._log.info(
            "history.snapshots",
            slot=slot,
            recorded=done.recorded,
            gaps=done.gaps,
            taken_elsewhere=done.taken_elsewhere,
            failed=done.failed,
        )
        return done

    async def _one(self, collection_id: CollectionId, slot: int, done: Pass) -> None:
        claimed = await self._history.claim(collection_id, slot)
        if not isinstance(claimed, Success):
            done.failed += 1
            return
        if not claimed.unwrap():
            done.taken_elsewhere += 1
            return
        now = self._clock()
        point = StatsPoint(now, 0, 0, 0, 0, 0, gap=True)
        if not self._short():
            answer = await self._stats.stats(collection_id)
            if isinstance(answer, Success):
                stats, cache = answer.unwrap()
                at = now - (cache.age_s if cache is not None else 0.0)
                point = StatsPoint(
                    at,
                    stats.impressions,
                    stats.engagements,
                    stats.score,
                    stats.videos,
                    len(stats.missing),
                )
            elif isinstance(answer.failure(), CollectionNotFound):
                return  # deleted meanwhile
        recorded = await self._history.record(collection_id, point)
        if not isinstance(recorded, Success):
            done.failed += 1
            return
        # A DELETE forgets the history before the collection: one that ran while this point was
        # taken would leave it behind, kept by nothing. Asked after recording, the store says so.
        still = await self._store.get(collection_id)
        if isinstance(still, Failure) and isinstance(still.failure(), CollectionNotFound):
            await self._history.forget(collection_id)
        elif point.gap:
            done.gaps += 1
        else:
            done.recorded += 1
