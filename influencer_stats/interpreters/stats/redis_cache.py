"""A stats cache in Redis, shared by every worker process and host."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import orjson
import redis.asyncio as redis
from returns.result import Result, Success

from influencer_stats.algebras import CollectionStatsQuery, EventLog
from influencer_stats.interpreters.stats.cache import CachePolicy
from influencer_stats.logic.models import (
    CacheInfo,
    CollectionId,
    CollectionNotFound,
    CollectionStats,
    StatsAnswer,
    StatsError,
    VideoId,
)

_REDIS_ERRORS = (redis.RedisError, OSError)
_Outcome = Result[StatsAnswer, StatsError]
_DEFAULT_POLICY = CachePolicy()


@dataclass(frozen=True, slots=True)
class _Entry:
    version: int
    stored_at: float
    stats: CollectionStats


class RedisCachedStats:
    """``CollectionStatsQuery`` wrapper caching answers in Redis for every worker.

    Versioned entries give read-your-writes across processes:

    - ``{prefix}:ver:{<id>}`` counts the collection's writes: ``invalidate``
      (run by ``InvalidatingStore`` after every save and delete, before the
      acknowledgement) ``INCR``s it. It never expires: a counter that
      restarted could match an old entry again (for the same reason Redis
      must run with ``maxmemory-policy noeviction``).
    - ``{prefix}:stats:{<id>}`` holds ``{version, stored_at, stats...}`` as
      JSON and expires after ``ttl_s`` plus the longer stale window.
    - A read is one ``MGET`` of both (one slot, thanks to the hash tag). The
      entry counts only if its version is the current one. On a miss the
      computation is stored under the version read *before* it started, so
      one that raced a write elsewhere stores an entry nobody will use.

    Freshness follows ``CachePolicy`` as ``CachedStats`` does: fresh within
    ``ttl_s``; then stale with one background refresh; on a failure other
    than not-found, an entry of the current version younger than ``ttl_s +
    stale_if_error_s`` is served as ``stale-if-error``. Ages come from the
    injected wall clock, so hosts' clocks should agree to well under ``ttl_s``.

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
        client: redis.Redis,
        clock: Callable[[], float],
        log: EventLog,
        policy: CachePolicy = _DEFAULT_POLICY,
        *,
        prefix: str = "is",
    ) -> None:
        self._inner = inner
        self._redis = client
        self._clock = clock
        self._log = log
        self._policy = policy
        self._prefix = prefix
        longest_stale = max(policy.stale_while_revalidate_s, policy.stale_if_error_s)
        self._lifetime_ms = max(1, round(1000 * (policy.ttl_s + longest_stale)))
        self._in_flight: dict[CollectionId, tuple[int, asyncio.Task[_Outcome]]] = {}
        self._voided: set[asyncio.Task[_Outcome]] = set()  # also keeps them referenced

    def _keys(self, collection_id: CollectionId) -> tuple[str, str]:
        tag = f"{{{collection_id}}}"
        return f"{self._prefix}:ver:{tag}", f"{self._prefix}:stats:{tag}"

    async def stats(self, collection_id: CollectionId) -> _Outcome:
        try:
            raw_version, raw_entry = await self._redis.mget(self._keys(collection_id))
        except _REDIS_ERRORS as exc:
            self._warn("read", collection_id, exc)
            return await self._inner.stats(collection_id)
        version = int(raw_version or 0)
        entry = _decode(raw_entry)
        if entry is not None and entry.version != version:
            entry = None  # from before the last write: never served, not even stale
        info = None if entry is None else self._policy.serve(entry.stored_at, self._now(entry))
        if entry is not None and info is not None:
            if info.stale_reason is not None:
                self._computation(collection_id, version)  # one refresh in the background
            return Success(StatsAnswer(entry.stats, info))
        outcome = await asyncio.shield(self._computation(collection_id, version))
        if entry is None or isinstance(outcome, Success) or isinstance(outcome.failure(), CollectionNotFound):
            return outcome
        info = self._policy.serve_if_error(entry.stored_at, self._now(entry))
        if info is None:
            return outcome
        self._log.warning(
            "stats.stale_if_error",
            collection=collection_id,
            age_s=round(info.age_s, 1),
            error=str(outcome.failure()),
        )
        return Success(StatsAnswer(entry.stats, info))

    async def invalidate(self, collection_id: CollectionId) -> None:
        flight = self._in_flight.pop(collection_id, None)  # later callers start afresh
        if flight is not None:
            self._voided.add(flight[1])
        try:
            await self._redis.incr(self._keys(collection_id)[0])
        except _REDIS_ERRORS as exc:
            self._log.error(
                "stats.cache_invalidate_failed", collection=collection_id, error=type(exc).__name__
            )
        await self._inner.invalidate(collection_id)

    def _now(self, entry: _Entry) -> float:
        return max(self._clock(), entry.stored_at)  # another host's clock may run ahead

    def _computation(self, collection_id: CollectionId, version: int) -> asyncio.Task[_Outcome]:
        flight = self._in_flight.get(collection_id)
        if flight is not None and flight[0] >= version:
            return flight[1]  # started after this caller's version was current
        if flight is not None:
            self._voided.add(flight[1])  # superseded by a newer write
        task = asyncio.create_task(self._compute(collection_id, version), name=f"stats:{collection_id}")
        self._in_flight[collection_id] = (version, task)
        return task

    async def _compute(self, collection_id: CollectionId, version: int) -> _Outcome:
        me = asyncio.current_task()
        try:
            outcome = await self._inner.stats(collection_id)
            if isinstance(outcome, Success) and me not in self._voided:
                stats = outcome.unwrap().stats
                if await self._store(collection_id, version, stats):
                    return Success(StatsAnswer(stats, CacheInfo(False, 0.0, self._policy.ttl_s)))
            return outcome
        finally:  # in flight until stored: a caller arriving meanwhile joins, not recomputes
            flight = self._in_flight.get(collection_id)
            if flight is not None and flight[1] is me:
                del self._in_flight[collection_id]
            self._voided.discard(me)

    async def _store(self, collection_id: CollectionId, version: int, stats: CollectionStats) -> bool:
        document = {
            "version": version,
            "stored_at": self._clock(),
            "impressions": stats.impressions,
            "engagements": stats.engagements,
            "score": stats.score,
            "videos": stats.videos,
            "missing": stats.missing,
        }
        try:
            await self._redis.set(self._keys(collection_id)[1], orjson.dumps(document), px=self._lifetime_ms)
        except _REDIS_ERRORS as exc:
            self._warn("write", collection_id, exc)
            return False
        return True

    def _warn(self, operation: str, collection_id: CollectionId, exc: BaseException) -> None:
        self._log.warning(
            "stats.cache_unavailable", operation=operation, collection=collection_id, error=type(exc).__name__
        )


def _decode(raw: bytes | str | None) -> _Entry | None:
    if raw is None:
        return None
    try:
        d = orjson.loads(raw)
        stats = CollectionStats(
            impressions=int(d["impressions"]),
            engagements=int(d["engagements"]),
            score=int(d["score"]),
            videos=int(d["videos"]),
            missing=tuple(VideoId(v) for v in d["missing"]),
        )
        return _Entry(int(d["version"]), float(d["stored_at"]), stats)
    except (KeyError, TypeError, ValueError):  # written by another release: a miss
        return None
