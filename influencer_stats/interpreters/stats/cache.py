"""What every stats cache shares with the core: the freshness windows (``CachePolicy``, also the
per-video cache's) and the store wrapper that tells the stats query about every write
(``InvalidatingStore``, around every store whatever the ``cache`` wrappers). The caches themselves
are the ``stats_cache`` slice's (``interpreters/stats_cache``)."""

from __future__ import annotations

from dataclasses import dataclass

from returns.result import Result

from influencer_stats.algebras import CollectionStatsQuery, CollectionStore
from influencer_stats.domain.models import (
    CacheInfo,
    Collection,
    CollectionId,
    CollectionNotFound,
    Replaced,
    Revision,
    RevisionChanged,
    SaveOutcome,
    StoreUnavailable,
    VideoId,
)


@dataclass(frozen=True, slots=True)
class CachePolicy:
    """Freshness windows (RFC 5861 terms) and the bound on entries."""

    ttl_s: float
    stale_while_revalidate_s: float
    stale_if_error_s: float
    max_entries: int

    def serve(self, stored_at: float, now: float, fresh_s: float | None = None) -> CacheInfo | None:
        """How an entry stored at ``stored_at`` is served at ``now`` without waiting.

        Fresh while younger than ``fresh_s`` (``ttl_s`` unless the entry says
        otherwise: ``Stored.computed``), then stale (``"revalidating"``) within
        ``stale_while_revalidate_s``; ``None`` past both: the caller computes.
        An entry is never younger than 0 s (another host's clock may run ahead).
        """
        age = max(0.0, now - stored_at)
        ttl_left = (self.ttl_s if fresh_s is None else fresh_s) - age
        if ttl_left > 0:
            return CacheInfo(True, age, ttl_left)
        if -ttl_left <= self.stale_while_revalidate_s:
            return CacheInfo(True, age, ttl_left, "revalidating")
        return None

    def serve_if_error(self, stored_at: float, now: float, fresh_s: float | None = None) -> CacheInfo | None:
        """How an entry is served instead of a failed computation; ``None`` once too old."""
        age = max(0.0, now - stored_at)
        lifetime = self.ttl_s if fresh_s is None else fresh_s
        if age > lifetime + self.stale_if_error_s:
            return None
        return CacheInfo(True, age, lifetime - age, "stale-if-error")


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

    async def replace_if(
        self, collection_id: CollectionId, videos: tuple[VideoId, ...], revision: Revision
    ) -> Result[Replaced, CollectionNotFound | RevisionChanged | StoreUnavailable]:
        try:
            return await self._inner.replace_if(collection_id, videos, revision)
        finally:
            await self._stats.invalidate(collection_id)

    async def delete(
        self, collection_id: CollectionId
    ) -> Result[None, CollectionNotFound | StoreUnavailable]:
        try:
            return await self._inner.delete(collection_id)
        finally:
            await self._stats.invalidate(collection_id)

    async def ids(
        self, after: CollectionId | None, limit: int
    ) -> Result[tuple[CollectionId, ...], StoreUnavailable]:
        return await self._inner.ids(after, limit)
