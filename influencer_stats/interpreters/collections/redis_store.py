"""Collections in Redis, shared by every worker process and host."""

from __future__ import annotations

import orjson
import redis.asyncio as redis
from returns.result import Failure, Result, Success

from influencer_stats.interpreters.redis_keys import RedisKeys
from influencer_stats.logic.models import (
    Collection,
    CollectionId,
    CollectionNotFound,
    Created,
    Replaced,
    SaveOutcome,
    StoreUnavailable,
    VideoId,
)

#: What a Redis call raises when the server cannot answer: redis-py's errors
#: (connection, timeout, LOADING, READONLY, OOM ...) and the OS's socket errors.
_REDIS_ERRORS = (redis.RedisError, OSError)


def _unavailable(exc: BaseException) -> StoreUnavailable:
    """The error as a value: its type only, never its text (which may name the server)."""
    return StoreUnavailable(f"redis: {type(exc).__name__}")


class RedisCollectionStore:
    """``CollectionStore`` in Redis (standalone, Sentinel or Cluster).

    Keys (``RedisKeys``):

    - ``collection``: the videos as a JSON array, in the user's order. Every
      key of one collection, the stats cache's included, lives in one slot.
    - ``index``: a set of the ids, for ``ids``.
    - ``version``: the collection's version, bumped in the same ``MULTI`` as
      every write, so a shared stats cache keyed by version
      (``RedisCachedStats``) can never miss a write, even if the process dies
      right after it.

    ``save`` is one atomic ``SET key value GET``: created when the previous
    value was nil. The index lives in another slot, so it is updated by a
    second command, ``SADD`` after the ``SET``; ``delete`` does ``SREM``
    before ``DEL``. In that order a concurrent save and delete of one id can
    leave an indexed id without a collection (never a collection without its
    index entry), so ``ids`` keeps only the ids whose key exists (one more
    pipelined round trip). It never removes such an id from the index itself:
    that could race a save. A call that fails between its two commands
    returns ``StoreUnavailable`` (not acknowledged) and may leave the
    collection stored but unlisted; repeating the call repairs it.

    Durability is Redis's: configure AOF (``appendfsync always`` or
    ``everysec``) and ``maxmemory-policy noeviction``. Any Redis or socket
    error is ``Failure(StoreUnavailable)`` naming only the error's type.
    Timeouts and pool limits are the client's (the composition root sets
    them). Safe for concurrent tasks: each command is atomic in Redis.
    """

    def __init__(self, client: redis.Redis, keys: RedisKeys) -> None:
        self._redis = client
        self._keys = keys
        self._index = keys.index

    async def ping(self) -> bool:
        """Whether Redis answers (for ``/readyz``)."""
        try:
            return bool(await self._redis.ping())
        except _REDIS_ERRORS:
            return False

    async def get(
        self, collection_id: CollectionId
    ) -> Result[Collection, CollectionNotFound | StoreUnavailable]:
        try:
            raw = await self._redis.get(self._keys.collection(collection_id))
        except _REDIS_ERRORS as exc:
            return Failure(_unavailable(exc))
        if raw is None:
            return Failure(CollectionNotFound(collection_id))
        return Success(Collection(collection_id, tuple(VideoId(v) for v in orjson.loads(raw))))

    async def save(
        self, collection_id: CollectionId, videos: tuple[VideoId, ...]
    ) -> Result[SaveOutcome, StoreUnavailable]:
        try:
            async with self._redis.pipeline(transaction=True) as pipe:  # one slot: MULTI works on Cluster
                pipe.set(self._keys.collection(collection_id), orjson.dumps(videos), get=True)
                pipe.incr(self._keys.version(collection_id))
                previous, _ = await pipe.execute()
            await self._redis.sadd(self._index, collection_id)
        except _REDIS_ERRORS as exc:
            return Failure(_unavailable(exc))
        return Success(Created() if previous is None else Replaced())

    async def delete(
        self, collection_id: CollectionId
    ) -> Result[None, CollectionNotFound | StoreUnavailable]:
        try:
            await self._redis.srem(self._index, collection_id)
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.delete(self._keys.collection(collection_id))
                pipe.incr(self._keys.version(collection_id))
                deleted, _ = await pipe.execute()
        except _REDIS_ERRORS as exc:
            return Failure(_unavailable(exc))
        return Success(None) if deleted else Failure(CollectionNotFound(collection_id))

    async def ids(self) -> Result[tuple[CollectionId, ...], StoreUnavailable]:
        try:
            members = sorted(_text(m) for m in await self._redis.smembers(self._index))
            async with self._redis.pipeline(transaction=False) as pipe:
                for member in members:
                    pipe.exists(self._keys.collection(member))
                exists = await pipe.execute()
        except _REDIS_ERRORS as exc:
            return Failure(_unavailable(exc))
        return Success(tuple(CollectionId(m) for m, e in zip(members, exists, strict=True) if e))


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
