"""A stats cache in Redis, shared by every worker process and host."""

from __future__ import annotations

from collections.abc import Callable

import orjson
from returns.result import Success

from influencer_stats.algebras import CacheMetrics, CollectionStatsQuery, EventLog
from influencer_stats.domain.models import (
    CacheInfo,
    CollectionId,
    CollectionStats,
    StatsAnswer,
    VideoId,
)
from influencer_stats.interpreters.redis_faults import REDIS_FAULTS
from influencer_stats.interpreters.redis_keys import RedisKeys
from influencer_stats.interpreters.redis_topology import RedisClient
from influencer_stats.interpreters.stats.cache import CachePolicy
from influencer_stats.interpreters.stats_cache.cache import Outcome, Stored, stale_if_error
from influencer_stats.interpreters.stats_cache.single_flight import SingleFlight


class RedisCachedStats:
    """``CollectionStatsQuery`` wrapper caching answers in Redis for every worker.

    Versioned entries give read-your-writes across processes (keys from
    ``RedisKeys``):

    - ``version`` counts the collection's writes: ``invalidate`` (run by
      ``InvalidatingStore`` after every save and delete, before the
      acknowledgement) ``INCR``s it. It never expires: a counter that
      restarted could match an old entry again (for the same reason Redis
      must run with ``maxmemory-policy noeviction``).
    - ``stats`` holds ``{version, stored_at, fresh_s, stats...}`` as JSON and expires
      after ``ttl_s`` plus the longer stale window.
    - A read is one ``MGET`` of both (one slot, thanks to the hash tag). The
      entry counts only if its version is the current one. On a miss the
      computation is stored under the version read *before* it started, so
      one that raced a write elsewhere stores an entry nobody will use.

    Freshness follows ``CachePolicy`` as ``CachedStats`` does: fresh for
    ``ttl_s`` after it was computed (``Stored.computed``); then stale with one background refresh; on a failure other
    than not-found, an entry of the current version younger than ``ttl_s +
    stale_if_error_s`` is served as ``stale-if-error``. Ages come from the
    injected wall clock, so hosts' clocks should agree to well under ``ttl_s``.
    Reads are recorded as cache events as ``CachedStats`` records them (a
    read that Redis failed to answer is a ``miss``).

    Concurrent misses in this process share one computation per collection
    and version; ``invalidate`` voids the one in flight, so later callers
    never join it.

    Redis failing never fails a request: a read falls back to ``inner``
    (uncached, a warning logged), a failed store is only logged. A failed
    ``INCR`` is logged as an error: other workers may then serve the entry
    from before that write until its ``ttl_s`` ends.
    """

    def __init__(
        self,
        inner: CollectionStatsQuery,
        client: RedisClient,
        clock: Callable[[], float],
        log: EventLog,
        policy: CachePolicy,
        metrics: CacheMetrics,
        keys: RedisKeys,
    ) -> None:
        self._inner = inner
        self._redis = client
        self._clock = clock
        self._log = log
        self._policy = policy
        self._metrics = metrics
        self._keys = keys
        longest_stale = max(policy.stale_while_revalidate_s, policy.stale_if_error_s)
        self._lifetime_ms = max(1, round(1000 * (policy.ttl_s + longest_stale)))
        self._flights: SingleFlight[CollectionId, Outcome] = SingleFlight("stats")

    async def stats(self, collection_id: CollectionId) -> Outcome:
        keys = (self._keys.version(collection_id), self._keys.stats(collection_id))
        try:
            raw_version, raw_entry = await self._redis.mget(keys)
        except REDIS_FAULTS as exc:
            self._warn("read", collection_id, exc)
            self._metrics.cache_event("miss")
            return await self._inner.stats(collection_id)
        version = int(raw_version or 0)
        stored = _decode(raw_entry, version)
        info = None if stored is None else self._policy.serve(stored.stored_at, self._clock(), stored.fresh_s)
        if stored is not None and info is not None:
            if info.stale_reason is None:
                self._metrics.cache_event("hit")
            else:
                self._metrics.cache_event("stale")
                self._flights.start(collection_id, lambda: self._compute(collection_id, version), version)
            return Success(StatsAnswer(stored.stats, info))
        self._metrics.cache_event("miss")
        outcome = await self._flights.run(
            collection_id, lambda: self._compute(collection_id, version), version
        )
        return stale_if_error(
            collection_id, outcome, stored, self._clock(), self._policy, self._log, self._metrics
        )

    async def invalidate(self, collection_id: CollectionId) -> None:
        self._flights.void(collection_id)  # later callers start afresh
        try:
            await self._redis.incr(self._keys.version(collection_id))
        except REDIS_FAULTS as exc:
            self._log.error(
                "stats.cache_invalidate_failed", collection=collection_id, error=type(exc).__name__
            )
        await self._inner.invalidate(collection_id)

    async def _compute(self, collection_id: CollectionId, version: int) -> Outcome:
        # In flight until stored: a caller arriving meanwhile joins, not recomputes.
        outcome = await self._inner.stats(collection_id)
        if isinstance(outcome, Success) and not self._flights.voided():
            stats, below = outcome.unwrap()  # below: how a video cache served its videos
            if await self._store(collection_id, version, stats, below):
                return Success(StatsAnswer(stats, below or CacheInfo(False, 0.0, self._policy.ttl_s)))
        return outcome

    async def _store(
        self, collection_id: CollectionId, version: int, stats: CollectionStats, below: CacheInfo | None
    ) -> bool:
        kept = Stored.computed(stats, self._clock(), below, self._policy.ttl_s)
        document = {
            "version": version,
            "stored_at": kept.stored_at,
            "fresh_s": kept.fresh_s,
            "impressions": stats.impressions,
            "engagements": stats.engagements,
            "score": stats.score,
            "videos": stats.videos,
            "missing": stats.missing,
        }
        try:
            await self._redis.set(
                self._keys.stats(collection_id), orjson.dumps(document), px=self._lifetime_ms
            )
        except REDIS_FAULTS as exc:
            self._warn("write", collection_id, exc)
            return False
        return True

    def _warn(self, operation: str, collection_id: CollectionId, exc: BaseException) -> None:
        self._log.warning(
            "stats.cache_unavailable", operation=operation, collection=collection_id, error=type(exc).__name__
        )


def _decode(raw: bytes | str | None, version: int) -> Stored | None:
    """The entry if it is of ``version``: one from before the last write is never served, even stale."""
    if raw is None:
        return None
    try:
        d = orjson.loads(raw)
        if int(d["version"]) != version:
            return None
        stats = CollectionStats(
            impressions=int(d["impressions"]),
            engagements=int(d["engagements"]),
            score=int(d["score"]),
            videos=int(d["videos"]),
            missing=tuple(VideoId(v) for v in d["missing"]),
        )
        return Stored(stats, float(d["stored_at"]), float(d["fresh_s"]))
    except (KeyError, TypeError, ValueError):  # written by another release: a miss
        return None
