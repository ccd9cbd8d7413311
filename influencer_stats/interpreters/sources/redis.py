"""Collection sources in Redis, shared by every worker and host (valid on a Cluster)."""

from __future__ import annotations

from returns.result import Failure, Result, Success

from influencer_stats.domain.models import CollectionId, KeptSource, Revision, StoreUnavailable
from influencer_stats.domain.sources import parse_source, source_text
from influencer_stats.interpreters.redis_faults import REDIS_FAULTS, store_unavailable
from influencer_stats.interpreters.redis_interval_claims import claim_in_redis
from influencer_stats.interpreters.redis_keys import RedisKeys, as_text
from influencer_stats.interpreters.redis_topology import RedisClient

#: KEYS: the source, its revision. ARGV: the source's text, the revision. Both set at once.
_PUT = """
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
return 0
"""
#: KEYS: the source, its revision, its claim. Deleted if the revision ('' when none) is ARGV[1].
_FORGET_IF = """
local revision = redis.call('GET', KEYS[2])
if not revision then revision = '' end
if revision ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
"""


class RedisCollectionSources:
    """``CollectionSources`` in one small string per collection (``RedisKeys.source``: ``<kind>:<id>``)
    and the collection's revision it was kept at beside it (``RedisKeys.source_revision``; none:
    kept before revisions, ``NO_REVISION``).

    The source never expires (it goes with ``put(…, None)`` or ``forget_if``); a claim
    (``RedisKeys.source_claim``, set by one script on its one key) expires ``claim_keep_s`` after
    it was taken, which must be longer than an interval: a claim gone is claimed again, its slot
    included. Nothing is claimed while no source is kept (checked in the claim's script), so a
    refresher that read a source just before a DELETE leaves no claim behind. Keeping writes both keys in one script, forgetting deletes all three in one command
    (``forget_if``: one script comparing the revision first); one hash tag: one slot, so valid on
    a Cluster. A Redis or socket error is ``StoreUnavailable``, naming the error's type only.
    """

    def __init__(self, client: RedisClient, keys: RedisKeys, claim_keep_s: float) -> None:
        self._redis = client
        self._keys = keys
        self._claim_keep_ms = max(1, round(claim_keep_s * 1000))

    def _keys_of(self, collection_id: CollectionId) -> list[str]:
        keys = self._keys
        return [
            keys.source(collection_id),
            keys.source_revision(collection_id),
            keys.source_claim(collection_id),
        ]

    async def get(self, collection_id: CollectionId) -> Result[KeptSource | None, StoreUnavailable]:
        try:
            raw, revision = await self._redis.mget(self._keys_of(collection_id)[:2])
        except REDIS_FAULTS as exc:
            return Failure(store_unavailable(exc))
        if raw is None:
            return Success(None)
        return Success(
            KeptSource(parse_source(as_text(raw)), Revision("" if revision is None else as_text(revision)))
        )

    async def put(
        self, collection_id: CollectionId, kept: KeptSource | None
    ) -> Result[None, StoreUnavailable]:
        keys = self._keys_of(collection_id)
        try:
            if kept is None:
                await self._redis.delete(*keys)
            else:
                await self._redis.eval(_PUT, 2, *keys[:2], source_text(kept.source), kept.revision)
        except REDIS_FAULTS as exc:
            return Failure(store_unavailable(exc))
        return Success(None)

    async def forget_if(
        self, collection_id: CollectionId, revision: Revision
    ) -> Result[None, StoreUnavailable]:
        try:
            await self._redis.eval(_FORGET_IF, 3, *self._keys_of(collection_id), revision)
        except REDIS_FAULTS as exc:
            return Failure(store_unavailable(exc))
        return Success(None)

    async def claim(self, collection_id: CollectionId, slot: int) -> Result[bool, StoreUnavailable]:
        keys = self._keys_of(collection_id)
        return await claim_in_redis(self._redis, keys[2], slot, self._claim_keep_ms, while_exists=keys[0])
