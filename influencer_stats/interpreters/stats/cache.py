"""A stats cache: TTL, LRU, single-flight, stale-while-revalidate, stale-if-error."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from returns.result import Failure, Result, Success

from influencer_stats.algebras import CollectionStatsQuery, CollectionStore, EventLog, Metrics
from influencer_stats.interpreters.metrics.noop import NoMetrics
from influencer_stats.logic.models import (
    CacheInfo,
    Collection,
    CollectionId,
    CollectionNotFound,
    SaveOutcome,
    StatsAnswer,
    StatsError,
    StoreUnavailable,
    VideoId,
)


@dataclass(frozen=True, slots=True)
class CachePolicy:
    """Freshness windows (RFC 5861 terms) and the bound on entries."""

    ttl_s: float = 10.0
    stale_while_revalidate_s: float = 30.0
    stale_if_error_s: float = 300.0
    max_entries: int = 10_000

    def serve(self, stored_at: float, now: float) -> CacheInfo | None:
        """How an entry stored at ``stored_at`` is served at ``now`` without waiting.

        Fresh within ``ttl_s``, then stale (``"revalidating"``) within
        ``stale_while_revalidate_s``; ``None`` past both: the caller computes.
        """
        age = now - stored_at
        ttl_left = self.ttl_s - age
        if ttl_left > 0:
            return CacheInfo(True, age, ttl_left)
        if -ttl_left <= self.stale_while_revalidate_s:
            return CacheInfo(True, age, ttl_left, "revalidating")
        return None

    def serve_if_error(self, stored_at: float, now: float) -> CacheInfo | None:
        """How an entry is served instead of a failed computation; ``None`` once too old."""
        age = now - stored_at
        if age > self.ttl_s + self.stale_if_error_s:
            return None
        return CacheInfo(True, age, self.ttl_s - age, "stale-if-error")


@dataclass(slots=True)
class _Entry:
    answer: StatsAnswer
    stored_at: float


_Outcome = Result[StatsAnswer, StatsError]


class CachedStats:
    """``CollectionStatsQuery`` wrapper that caches successful answers per collection.

    - Fresh for ``ttl_s``: served from memory, no I/O.
    - Then, for ``stale_while_revalidate_s``: served stale while one
      background refresh runs.
    - Concurrent misses of one collection share one computation
      (single-flight); a caller that goes away does not cancel it for others.
    - When the upstream fails, an entry younger than ``ttl_s +
      stale_if_error_s`` is served instead, marked ``stale-if-error``.
    - ``invalidate`` (called after every write) drops the entry and voids any
      computation in flight: a computation that started before a write can
      never store its answer after it, and later callers do not join it.
    - At most ``max_entries`` entries, least recently used evicted first.

    One process only: with several workers, use a shared cache. The clock is
    injected; tasks are created on the running loop.
    """

    def __init__(
        self,
        inner: CollectionStatsQuery,
        clock: Callable[[], float],
        log: EventLog,
        policy: CachePolicy = CachePolicy(),
        metrics: Metrics | None = None,
    ) -> None:
        self._inner = inner
        self._clock = clock
        self._log = log
        self._policy = policy
        self._entries: OrderedDict[CollectionId, _Entry] = OrderedDict()
        self._in_flight: dict[CollectionId, asyncio.Task[_Outcome]] = {}
        self._voided: set[asyncio.Task[_Outcome]] = set()
        self._metrics: Metrics = metrics or NoMetrics()

    async def stats(self, collection_id: CollectionId) -> _Outcome:
        entry = self._entries.get(collection_id)
        info = None if entry is None else self._policy.serve(entry.stored_at, self._clock())
        if entry is not None and info is not None:
            if info.stale_reason is None:
                self._metrics.cache_event("hit")
                self._entries.move_to_end(collection_id)
            else:
                self._metrics.cache_event("stale")
                self._computation(collection_id)  # one refresh in the background
            return Success(StatsAnswer(entry.answer.stats, info))
        self._metrics.cache_event("miss")
        outcome = await asyncio.shield(self._computation(collection_id))
        if isinstance(outcome, Failure) and not isinstance(outcome.failure(), CollectionNotFound):
            return self._stale_if_error(collection_id, outcome)
        return outcome

    async def invalidate(self, collection_id: CollectionId) -> None:
        self._entries.pop(collection_id, None)
        task = self._in_flight.pop(collection_id, None)  # later callers start afresh
        if task is not None:
            self._voided.add(task)
        await self._inner.invalidate(collection_id)

    def _computation(self, collection_id: CollectionId) -> asyncio.Task[_Outcome]:
        task = self._in_flight.get(collection_id)
        if task is None:
            task = asyncio.create_task(self._compute(collection_id), name=f"stats:{collection_id}")
            self._in_flight[collection_id] = task
        return task

    async def _compute(self, collection_id: CollectionId) -> _Outcome:
        me = asyncio.current_task()
        try:
            outcome = await self._inner.stats(collection_id)
        finally:
            if self._in_flight.get(collection_id) is me:
                del self._in_flight[collection_id]
            voided = me in self._voided
            self._voided.discard(me)
        match outcome:
            case Success(answer):
                fresh = StatsAnswer(answer.stats, CacheInfo(False, 0.0, self._policy.ttl_s))
                if not voided:
                    self._store(collection_id, fresh)
                return Success(fresh)
            case Failure(CollectionNotFound()):
                self._entries.pop(collection_id, None)
        return outcome

    def _store(self, collection_id: CollectionId, answer: StatsAnswer) -> None:
        self._entries[collection_id] = _Entry(answer, self._clock())
        self._entries.move_to_end(collection_id)
        while len(self._entries) > self._policy.max_entries:
            self._entries.popitem(last=False)

    def _stale_if_error(self, collection_id: CollectionId, failure: _Outcome) -> _Outcome:
        entry = self._entries.get(collection_id)
        info = None if entry is None else self._policy.serve_if_error(entry.stored_at, self._clock())
        if entry is None or info is None:
            return failure
        self._metrics.cache_event("stale_if_error")
        self._log.warning(
            "stats.stale_if_error",
            collection=collection_id,
            age_s=round(info.age_s, 1),
            error=str(failure.failure()),
        )
        return Success(StatsAnswer(entry.answer.stats, info))


class InvalidatingStore:
    """``CollectionStore`` wrapper that tells a stats query about every write.

    The invalidation runs after the write returns and before the caller gets
    the acknowledgement, whatever the outcome (a failed write may still have
    landed).
    """

    def __init__(self, inner: CollectionStore, stats: CollectionStatsQuery) -> None:
        self._inner = inner
        self._stats = stats

    async def get(
        self, collection_id: CollectionId
    ) -> Result[Collection, CollectionNotFound | StoreUnavailable]:
        return await self._inner.get(collection_id)

    async def save(
        self, collection_id: CollectionId, videos: tuple[VideoId, ...]
    ) -> Result[SaveOutcome, StoreUnavailable]:
        try:
            return await self._inner.save(collection_id, videos)
        finally:
            await self._stats.invalidate(collection_id)

    async def delete(
        self, collection_id: CollectionId
    ) -> Result[None, CollectionNotFound | StoreUnavailable]:
        try:
            return await self._inner.delete(collection_id)
        finally:
            await self._stats.invalidate(collection_id)

    async def ids(self) -> Result[tuple[CollectionId, ...], StoreUnavailable]:
        return await self._inner.ids()
