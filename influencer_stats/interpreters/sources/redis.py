"""Collection sources in Redis, shared by every worker and host (valid on a Cluster)."""

from __future__ import annotations

from returns.result import Failure, Result, Success

from influencer_stats.domain.models import CollectionId, CollectionSource, StoreUnavailable
from influencer_stats.interpreters.redis_faults import REDIS_FAULTS, store_unavailable
from influencer_stats.interpreters.redis_interval_claims import claim_in_redis
from influencer_stats.interpreters.redis_keys import RedisKeys, as_text
from influencer_stats.interpreters.redis_topology import RedisClient
from influencer_stats.interpreters.sources.text import parse_source, source_text


class RedisCollectionSources:
    """``CollectionSources`` in one small string per collection (``RedisKeys.source``: ``<kind>:<id>``).

    The source never expires (it goes with ``put(…, None)``); a claim (``RedisKeys.source_claim``,
    set by one script on its one key) expires ``claim_keep_s`` after it was taken, which must be
    longer than an interval: a claim gone is claimed again, its slot included. Forgetting deletes
    both keys in one command (one hash tag: one slot, so valid on a Cluster). A Redis or socket
    error is ``StoreUnavailable``, naming the error's type only.
    """

    def __init__(self, client: RedisClient, keys: RedisKeys, claim_keep_s: float) -> None:
        self._redis = client
        self._keys = keys
        self._claim_keep_ms = max(1, round(claim_keep_s * 1000))

    async def get(self, collection_id: CollectionId) -> Result[CollectionSource | None, StoreUnavailable]:
        try:
            raw: bytes | str | None = await self._redis.get(self._keys.source(collection_id))
        except REDIS_FAULTS as exc:
            return Failure(store_unavailable(exc))
        return Success(None if raw is None else parse_source(as_text(raw)))

    async def put(
        self, collection_id: CollectionId, source: CollectionSource | None
    ) -> Result[None, StoreUnavailable]:
        try:
            if source is None:
                await self._redis.delete(
                    self._keys.source(collection_id), self._keys.source_claim(collection_id)
                )
            else:
                await self._redis.set(self._keys.source(collection_id), source_text(source))
        except REDIS_FAULTS as exc:
            return Failure(store_unavailable(exc))
        return Success(None)

    async def claim(self, collection_id: CollectionId, slot: int) -> Result[bool, StoreUnavailable]:
        return await claim_in_redis(
            self._redis, self._keys.source_claim(collection_id), slot, self._claim_keep_ms
        )
