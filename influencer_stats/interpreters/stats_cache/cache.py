"""A stats cache: TTL, LRU, single-flight, stale-while-revalidate, stale-if-error."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from returns.result import Failure, Result, Success

from influencer_stats.algebras import CacheMetrics, CollectionStatsQuery, EventLog
from influencer_stats.domain.models import (
    CacheInfo,
    CollectionId,
    CollectionNotFound,
    CollectionStats,
    StatsAnswer,
    StatsError,
)
from influencer_stats.interpreters.stats.cache import CachePolicy
from influencer_stats.interpreters.stats_cache.single_flight import SingleFlight


@dataclass(frozen=True, slots=True)
class Stored:
    """The stats a cache holds for a collection: dated by their data (``stored_at``, by the
    cache's clock; an answer's ``Age`` counts from it) and fresh while younger than ``fresh_s``."""

    stats: CollectionStats
    stored_at: float
    fresh_s: float

    @classmethod
    def computed(cls, stats: CollectionStats, now: float, below: CacheInfo | None, ttl_s: float) -> Stored:
        """Stats computed at ``now`` from what ``below`` served (a per-video or a shared cache),
        dated by that data's age and fresh for ``ttl_s`` from now, or for what it had left if less.

        Dating them by the data alone made an answer from videos older than ``ttl_s`` (fresh
        in a per-video cache for minutes) stale as soon as stored, and every request after it
        started a recomputation of the same figures (perf/RESULTS.md, "Distributed beside
        fast, pinned": about 150 a second on uvicorn, 1,200 on Granian).
        """
        if below is None:
            return cls(stats, now, ttl_s)
        return cls(stats, now - below.age_s, below.age_s + min(ttl_s, max(below.ttl_s, 0.0)))


Outcome = Result[StatsAnswer, StatsError]


def stale_if_error(
    collection_id: CollectionId,
    outcome: Outcome,
    stored: Stored | None,
    now: float,
    policy: CachePolicy,
    log: EventLog,
    metrics: CacheMetrics,
) -> Outcome:
    """``outcome``, or ``stored`` served ``stale-if-error`` in place of its failure.

    Only a failure other than not-found is replaced (a collection that is gone
    is gone), and only by an entry ``policy.serve_if_error`` still allows;
    then a ``stale_if_error`` cache event is recorded and a warning logged.
    """
    if stored is None or isinstance(outcome, Success) or isinstance(outcome.failure(), CollectionNotFound):
        return outcome
    info = policy.serve_if_error(stored.stored_at, now, stored.fresh_s)
    if info is None:
        return outcome
    metrics.cache_event("stale_if_error")
    log.warning(
        "stats.stale_if_error",
        collection=collection_id,
        age_s=round(info.age_s, 1),
        error=str(outcome.failure()),
    )
    return Success(StatsAnswer(stored.stats, info))


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
    - Every read is recorded as a cache event: ``hit``, ``stale``, ``miss``,
      and ``stale_if_error`` when a stale entry replaces a failure.

    One process only: with several workers, use a shared cache. The clock is
    injected; tasks are created on the running loop.
    """

    def __init__(
        self,
        inner: CollectionStatsQuery,
        clock: Callable[[], float],
        log: EventLog,
        policy: CachePolicy,
        metrics: CacheMetrics,
    ) -> None:
        self._inner = inner
        self._clock = clock
        self._log = log
        self._policy = policy
        self._metrics = metrics
        self._entries: OrderedDict[CollectionId, Stored] = OrderedDict()
        self._flights: SingleFlight[CollectionId, Outcome] = SingleFlight("stats")

    async def stats(self, collection_id: CollectionId) -> Outcome:
        stored = self._entries.get(collection_id)
        info = None if stored is None else self._policy.serve(stored.stored_at, self._clock(), stored.fresh_s)
        if stored is not None and info is not None:
            if info.stale_reason is None:
                self._metrics.cache_event("hit")
                self._entries.move_to_end(collection_id)
            else:
                self._metrics.cache_event("stale")
                self._flights.start(collection_id, lambda: self._compute(collection_id))  # one refresh
            return Success(StatsAnswer(stored.stats, info))
        self._metrics.cache_event("miss")
        outcome = await self._flights.run(collection_id, lambda: self._compute(collection_id))
        stored = self._entries.get(collection_id)  # unless a write dropped it meanwhile
        return stale_if_error(
            collection_id, outcome, stored, self._clock(), self._policy, self._log, self._metrics
        )

    async def invalidate(self, collection_id: CollectionId) -> None:
        self.forget(collection_id)
        await self._inner.invalidate(collection_id)

    def forget(self, collection_id: CollectionId) -> None:
        """Drop the entry and void the computation in flight, telling ``inner`` nothing (a write
        elsewhere told it already)."""
        self._entries.pop(collection_id, None)
        self._flights.void(collection_id)

    def holds(self, collection_id: CollectionId) -> bool:
        """Whether an entry for the collection is kept."""
        return collection_id in self._entries

    def forget_all(self) -> None:
        """``forget`` every collection."""
        self._entries.clear()
        self._flights.void_all()

    async def _compute(self, collection_id: CollectionId) -> Outcome:
        outcome = await self._inner.stats(collection_id)
        match outcome:
            case Success(answer):
                if not self._flights.voided():
                    self._store(collection_id, answer.stats, answer.cache)
                return Success(
                    StatsAnswer(answer.stats, answer.cache or CacheInfo(False, 0.0, self._policy.ttl_s))
                )
            case Failure(CollectionNotFound()):
                self._entries.pop(collection_id, None)
        return outcome

    def _store(self, collection_id: CollectionId, stats: CollectionStats, below: CacheInfo | None) -> None:
        self._entries[collection_id] = Stored.computed(stats, self._clock(), below, self._policy.ttl_s)
        self._entries.move_to_end(collection_id)
        while len(self._entries) > self._policy.max_entries:
            self._entries.popitem(last=False)
