"""Collections in Redis, shared by every worker process and host."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import redis.asyncio as redis
from redis.asyncio.cluster import RedisCluster
from redis.typing import EncodableT
from returns.result import Failure, Result, Success

from influencer_stats.domain.models import (
    Collection,
    CollectionId,
    CollectionNotFound,
    Created,
    Replaced,
    Revision,
    RevisionChanged,
    SaveOutcome,
    StoreUnavailable,
    VideoId,
    new_revision,
)
from influencer_stats.interpreters.redis_faults import REDIS_FAULTS, store_unavailable
from influencer_stats.interpreters.redis_keys import RedisKeys, as_text
from influencer_stats.interpreters.redis_topology import RedisClient, fewest_replicas

#: Ids copied from the set index into the sorted one per round trip.
_CATCH_UP_CHUNK = 1_000

#: A page of the sorted index as one string, the ids joined by newlines (no id holds one).
#: One reply, not one per id: redis-py's parser is pure Python, about 4 µs an element, so
#: ``ZRANGEBYLEX`` itself kept the event loop 4 ms a page of 1,000 (this: under 0.5 ms).
#: One key, so Cluster runs it too.
_PAGE = """
return table.concat(redis.call('ZRANGEBYLEX', KEYS[1], ARGV[1], '+', 'LIMIT', 0, ARGV[2]), '\\n')
"""
#: One round of copying the set index (KEYS[1]) into the sorted one (KEYS[2]), in Redis:
#: ``SSCAN`` from cursor ARGV[1] (COUNT ARGV[2]), ``ZADD NX`` of what it found, the next
#: cursor returned ("0": done). No id crosses the wire, so none is parsed on the event loop.
#: Both keys share a slot. Needs Redis 5 or later (a write after ``SSCAN`` in a script).
_CATCH_UP = """
local scanned = redis.call('SSCAN', KEYS[1], ARGV[1], 'COUNT', ARGV[2])
local members = scanned[2]
for first = 1, #members, 1000 do
  local zadd = {}
  for i = first, math.min(first + 999, #members) do
    zadd[#zadd + 1] = 0
    zadd[#zadd + 1] = members[i]
  end
  redis.call('ZADD', KEYS[2], 'NX', unpack(zadd))
end
return scanned[1]
"""


#: A write of one collection (KEYS: its value, its version, its revision): the value (ARGV[1])
#: and revision (ARGV[2]) set or, with no ARGV, both deleted; the version bumped either way.
#: Returns the previous value (save) or how many values were deleted (delete). One slot, so
#: Cluster runs it too.
_WRITE = """
local before
if #ARGV == 2 then
  before = redis.call('SET', KEYS[1], ARGV[1], 'GET')
  redis.call('SET', KEYS[3], ARGV[2])
else
  before = redis.call('DEL', KEYS[1])
  redis.call('DEL', KEYS[3])
end
redis.call('INCR', KEYS[2])
return before
"""
#: A conditional replace (KEYS as ``_WRITE``'s): the value (ARGV[1]) and the new revision (ARGV[3])
#: set only if the collection exists (else -1) and its revision ('' when it has none) is still
#: ARGV[2] (else 0); 1 when written. The check and the write are one script: atomic.
_REPLACE_IF = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local revision = redis.call('GET', KEYS[3])
if not revision then revision = '' end
if revision ~= ARGV[2] then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[3], ARGV[3])
redis.call('INCR', KEYS[2])
return 1
"""
#: The id (ARGV[1]) added to (ARGV[2] = 1) or removed from both indexes (KEYS: the set, the sorted set).
_INDEX = """
if ARGV[2] == '1' then
  redis.call('SADD', KEYS[1], ARGV[1])
  redis.call('ZADD', KEYS[2], 0, ARGV[1])
else
  redis.call('SREM', KEYS[1], ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
end
return 0
"""


class NotReplicated(redis.RedisError):
    """Fewer replicas than required acknowledged a write in time (it may yet reach them)."""


class RedisCollectionStore:
    """``CollectionStore`` in Redis (standalone, Sentinel or Cluster).

    Keys (``RedisKeys``):

    - ``collection``: the videos as a JSON array, in the user's order. Every
      key of one collection, the stats cache's included, lives in one slot.
    - ``sorted_index``: a sorted set of the ids (every score 0), which ``ids``
      pages with ``ZRANGEBYLEX``: O(log n + limit) a page, never the whole set,
      through a Lua script that answers the page as one string (``_PAGE``), so
      the event loop parses one reply, not one per id.
    - ``index``: the set of the ids the versions before paging listed. It is
      still written beside the sorted set (one ``MULTI``: both keys share a
      slot), so an older version running at the same time lists every id.
    - ``revision``: the revision of the collection's last write (a random
      token; none for data written before revisions: ``NO_REVISION``), set
      and deleted by the write's script, compared and set by ``replace_if``'s
      (``_REPLACE_IF``: one script, so the compare and the write are atomic).
    - ``version``: the collection's version, bumped in the same ``MULTI`` as
      every write, so a shared stats cache keyed by version
      (``RedisCachedStats``) can never miss a write, even if the process dies
      right after it.

    Each write is two atomic steps, each a script over one slot (``_WRITE``,
    ``_INDEX``). ``save`` is ``SET key value GET`` and the version's ``INCR``:
    created when the previous value was nil; the index lives in another slot,
    so it is updated by the second step (``SADD`` and ``ZADD``); ``delete``
    removes the id from the index (``SREM`` and ``ZREM``) before ``DEL``. In
    that order a concurrent save and delete of one id can leave an indexed id
    without a collection (never a collection without its index entry), so
    ``ids`` keeps only the ids whose key exists: one ``EXISTS`` over the page's
    keys, and one per key only when that count says some are missing; a page
    short of ``limit`` that way is topped up from further on. It never removes
    such an id from the index itself: that could race a save. A call that fails
    between its two steps returns ``StoreUnavailable`` (not acknowledged) and
    may leave the collection stored but unlisted; repeating the call repairs it.

    Data written before the sorted set existed (or by an older version since)
    is in the set only. A first page (``after`` None) compares the two
    cardinalities (``SCARD``, ``ZCARD``: O(1)); while the set holds more, it
    first copies the set into the sorted set, inside Redis (``_CATCH_UP``:
    ``SSCAN`` and ``ZADD NX``, 1,000 ids a round trip, none sent to us; once
    per process at a time), so no deployed id goes unlisted. (An id an older
    version deletes stays in the sorted set, skipped as above; until it is
    saved again it counts there and can mask as many ids such a version adds
    meanwhile: a rollout of this version should not last long.)

    Durability is Redis's: configure AOF (``appendfsync always`` or
    ``everysec``) and ``maxmemory-policy noeviction``. With ``wait_replicas``,
    each step is followed, on the same connection, by ``WAIT wait_replicas
    wait_ms``, and a write is acknowledged only once that many replicas have
    both steps; fewer in time is ``StoreUnavailable`` (``NotReplicated``): the
    write may still have happened, so the caller repeats it (both are
    idempotent), and a failover that promotes a replica that had it loses
    nothing acknowledged. Any Redis fault
    (``REDIS_FAULTS``: a Redis or socket error, a connection reset under the
    pool included) is ``Failure(StoreUnavailable)`` naming only the error's type.
    Timeouts and pool limits are the client's (the composition root sets
    them). Safe for concurrent tasks: each command is atomic in Redis.
    """

    def __init__(self, client: RedisClient, keys: RedisKeys, *, wait_replicas: int, wait_ms: int) -> None:
        self._redis = client
        self._keys = keys
        self._wait_replicas = wait_replicas
        self._wait_ms = wait_ms
        self._index = keys.index
        self._sorted_index = keys.sorted_index
        self._catching_up = asyncio.Lock()
        self._page = client.register_script(_PAGE)
        self._copy = client.register_script(_CATCH_UP)

    async def ping(self) -> bool:
        """Whether Redis answers (for ``/readyz``)."""
        try:
            return bool(await self._redis.ping())
        except REDIS_FAULTS:
            return False

    async def replicated(self) -> bool:
        """Whether each primary a write goes to has ``wait_replicas`` replicas online, so a write
        can be acknowledged (for ``/readyz``; without them every write answers 503)."""
        try:
            return await fewest_replicas(self._redis) >= self._wait_replicas
        except REDIS_FAULTS:
            return False

    async def get(
        self, collection_id: CollectionId
    ) -> Result[Collection, CollectionNotFound | StoreUnavailable]:
        try:  # one slot: MGET is one command on Cluster too
            raw, revision = await self._redis.mget(
                self._keys.collection(collection_id), self._keys.revision(collection_id)
            )
        except REDIS_FAULTS as exc:
            return Failure(store_unavailable(exc))
        if raw is None:
            return Failure(CollectionNotFound(collection_id))
        ids = tuple(VideoId(v) for v in orjson.loads(raw))
        return Success(
            Collection(collection_id, ids, Revision("" if revision is None else as_text(revision)))
        )

    async def save(
        self, collection_id: CollectionId, videos: tuple[VideoId, ...]
    ) -> Result[SaveOutcome, StoreUnavailable]:
        revision = new_revision()
        try:
            previous = await self._write(
                _WRITE, self._collection_keys(collection_id), orjson.dumps(videos), revision
            )
            await self._write(_INDEX, [self._index, self._sorted_index], collection_id, 1)
        except REDIS_FAULTS as exc:
            return Failure(store_unavailable(exc))
        return Success(Created(revision) if previous is None else Replaced(revision))

    async def replace_if(
        self, collection_id: CollectionId, videos: tuple[VideoId, ...], revision: Revision
    ) -> Result[Replaced, CollectionNotFound | RevisionChanged | StoreUnavailable]:
        written = new_revision()
        keys = self._collection_keys(collection_id)
        try:  # an existing collection is already indexed: one step
            answer = await self._write(_REPLACE_IF, keys, orjson.dumps(videos), revision, written)
        except REDIS_FAULTS as exc:
            return Failure(store_unavailable(exc))
        if answer == 1:
            return Success(Replaced(written))
        return Failure(RevisionChanged(collection_id) if answer == 0 else CollectionNotFound(collection_id))

    async def delete(
        self, collection_id: CollectionId
    ) -> Result[None, CollectionNotFound | StoreUnavailable]:
        try:
            await self._write(_INDEX, [self._index, self._sorted_index], collection_id, 0)
            deleted = await self._write(_WRITE, self._collection_keys(collection_id))
        except REDIS_FAULTS as exc:
            return Failure(store_unavailable(exc))
        return Success(None) if deleted else Failure(CollectionNotFound(collection_id))

    def _collection_keys(self, collection_id: CollectionId) -> list[str]:
        return [
            self._keys.collection(collection_id),
            self._keys.version(collection_id),
            self._keys.revision(collection_id),
        ]

    async def _write(self, script: str, keys: list[str], *args: EncodableT) -> Any:
        """``script``'s answer, once ``wait_replicas`` replicas have what it wrote (``WAIT`` on its
        connection: one pipeline, so one connection, of one shard's primary on a Cluster)."""
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.eval(script, len(keys), *keys, *args)
            if self._wait_replicas:
                pipe.execute_command(
                    "WAIT", self._wait_replicas, self._wait_ms, **await self._node_of(keys[0])
                )
            answer, *acknowledged = await pipe.execute()
        if acknowledged and acknowledged[0] < self._wait_replicas:
            raise NotReplicated(f"{acknowledged[0]} of {self._wait_replicas} replicas in {self._wait_ms} ms")
        return answer

    async def _node_of(self, key: str) -> dict[str, Any]:
        """Where a keyless command must go to follow a write of ``key``: on a Cluster, its primary."""
        if not isinstance(self._redis, RedisCluster):
            return {}
        await self._redis.initialize()  # the slot map, learnt once
        return {"target_nodes": self._redis.get_node_from_key(key)}

    async def ids(
        self, after: CollectionId | None, limit: int
    ) -> Result[tuple[CollectionId, ...], StoreUnavailable]:
        found: list[CollectionId] = []
        low = "-" if after is None else "(" + after
        try:
            if after is None:
                await self._catch_up()
            while len(found) < limit:  # more than once only past ids without a collection
                wanted = limit - len(found)
                joined = as_text(await self._page(keys=[self._sorted_index], args=[low, wanted]))
                members = joined.split("\n") if joined else []
                found.extend(await self._existing(members))
                if len(members) < wanted:
                    break
                low = "(" + members[-1]
        except REDIS_FAULTS as exc:
            return Failure(store_unavailable(exc))
        return Success(tuple(found))

    async def _existing(self, ids: list[str]) -> list[CollectionId]:
        """The ids whose collection exists: one ``EXISTS`` in the usual case of all."""
        if not ids:
            return []
        keys = [self._keys.collection(i) for i in ids]
        if await self._redis.exists(*keys) == len(keys):
            return [CollectionId(i) for i in ids]
        async with self._redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.exists(key)
            exists = await pipe.execute()
        return [CollectionId(i) for i, e in zip(ids, exists, strict=True) if e]

    async def _catch_up(self) -> None:
        """Copy the set index into the sorted one while the set holds more ids."""
        if not await self._behind():
            return
        async with self._catching_up:  # one copy per process; others wait for it
            if not await self._behind():
                return
            cursor, rounds = b"0", await self._redis.scard(self._index) // 100 + 10
            for _ in range(rounds):  # SSCAN ends in about size/1,000 rounds; bounded anyway
                cursor = await self._copy(
                    keys=[self._index, self._sorted_index], args=[cursor, _CATCH_UP_CHUNK]
                )
                if as_text(cursor) == "0":
                    return

    async def _behind(self) -> bool:
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.scard(self._index)
            pipe.zcard(self._sorted_index)
            in_set, in_sorted = await pipe.execute()
        return bool(in_set > in_sorted)
