"""A near-cache: stats hits from process memory, kept correct across workers and hosts by Redis."""

from __future__ import annotations

from collections.abc import Callable

from influencer_stats.algebras import CacheMetrics, CollectionStatsQuery, EventLog
from influencer_stats.domain.models import CollectionId
from influencer_stats.interpreters.redis_faults import REDIS_FAULTS
from influencer_stats.interpreters.redis_topology import RedisClient
from influencer_stats.interpreters.stats.cache import CachePolicy
from influencer_stats.interpreters.stats_cache.cache import CachedStats, Outcome


class NearCachedStats:
    """``CollectionStatsQuery`` wrapper: an in-process ``CachedStats`` in front of a shared one,
    used only while Redis's invalidations reach this process.

    ``invalidate`` (every write through this process) forgets the collection
    here, bumps its version in Redis (``INCR``, as ``RedisCachedStats`` does,
    so every worker running this layer hears of the write whatever the store)
    unless ``client`` is None (what is below bumps it already: the Redis store,
    the Redis cache), then tells ``inner``. ``forget(collection_id)`` is what
    ``KeyTracking`` calls for each version key a worker or host bumps, and
    ``forget_all`` when the feed was lost, lapsed or the data flushed; both void
    what is in flight, so an answer read before a write is never kept after it.
    While ``live()`` is false (tracking down, or lapsed) every request goes to
    ``inner`` and nothing is kept: the shared cache alone, as without this layer.

    Freshness is the shared cache's policy: an entry is kept with the age the
    shared cache reported, so it expires when the shared one does. Cache events
    are recorded as ``near_hit``, ``near_stale`` and ``near_miss`` (a near miss
    then counts as the shared cache's own hit or miss), ``near_off`` for a request
    passed through while tracking is down.
    """

    def __init__(
        self,
        inner: CollectionStatsQuery,
        client: RedisClient | None,
        version_key: Callable[[str], str],
        live: Callable[[], bool],
        clock: Callable[[], float],
        log: EventLog,
        policy: CachePolicy,
        metrics: CacheMetrics,
    ) -> None:
        self._inner = inner
        self._redis = client
        self._version_key = version_key
        self._log = log
        self._live = live
        self._metrics = metrics
        self._near = CachedStats(inner, clock, log, policy, _Near(metrics))

    async def stats(self, collection_id: CollectionId) -> Outcome:
        if self._live():
            return await self._near.stats(collection_id)
        self._metrics.cache_event("near_off")
        return await self._inner.stats(collection_id)

    async def invalidate(self, collection_id: CollectionId) -> None:
        self._near.forget(collection_id)
        if self._redis is not None:
            try:
                await self._redis.incr(self._version_key(collection_id))  # heard by every worker's tracking
            except REDIS_FAULTS as exc:
                self._log.error(
                    "stats.cache_invalidate_failed", collection=collection_id, error=type(exc).__name__
                )
        await self._inner.invalidate(collection_id)

    def forget(self, collection_id: CollectionId) -> None:
        self._near.forget(collection_id)

    def forget_all(self) -> None:
        self._near.forget_all()

    def holds(self, collection_id: CollectionId) -> bool:
        """Whether an answer for the collection is kept here (for tests and debugging)."""
        return self._near.holds(collection_id)


class _Near:
    """The near layer's cache events, named apart from the shared cache's."""

    def __init__(self, metrics: CacheMetrics) -> None:
        self._metrics = metrics

    def cache_event(self, kind: str) -> None:
        self._metrics.cache_event(f"near_{kind}")

    def video_cache_event(self, kind: str, count: int) -> None:
        self._metrics.video_cache_event(kind, count)

    def calls_saved(self, by: str, count: int) -> None:
        self._metrics.calls_saved(by, count)

    def quota_stale_answer(self) -> None:
        self._metrics.quota_stale_answer()
