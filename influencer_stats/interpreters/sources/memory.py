"""Collection sources in process memory: one process, gone at exit."""

from __future__ import annotations

from returns.result import Result, Success

from influencer_stats.domain.models import CollectionId, KeptSource, Revision, StoreUnavailable
from influencer_stats.interpreters.interval_claims import LatestClaims


class MemoryCollectionSources:
    """``CollectionSources`` in a dict, for one process (tests, ``demo``).

    Every source put is kept until it is forgotten (never dropped to make room: one per
    collection, which the store bounds). The claims are bounded by ``max_claims``: past it,
    claiming for a new collection forgets the claim made least recently. No ``await`` inside
    a method, so ``forget_if``'s check and forgetting are one step.
    """

    def __init__(self, max_claims: int) -> None:
        self._sources: dict[CollectionId, KeptSource] = {}
        self._claims = LatestClaims(max_claims)

    async def get(self, collection_id: CollectionId) -> Result[KeptSource | None, StoreUnavailable]:
        return Success(self._sources.get(collection_id))

    async def put(
        self, collection_id: CollectionId, kept: KeptSource | None
    ) -> Result[None, StoreUnavailable]:
        if kept is None:
            self._sources.pop(collection_id, None)
            self._claims.forget(collection_id)
        else:
            self._sources[collection_id] = kept
        return Success(None)

    async def forget_if(
        self, collection_id: CollectionId, revision: Revision
    ) -> Result[None, StoreUnavailable]:
        kept = self._sources.get(collection_id)
        if kept is not None and kept.revision == revision:
            del self._sources[collection_id]
            self._claims.forget(collection_id)
        return Success(None)

    async def claim(self, collection_id: CollectionId, slot: int) -> Result[bool, StoreUnavailable]:
        return Success(collection_id in self._sources and self._claims.claim(collection_id, slot))
