"""The per-video cache's entries, stale queue and miss claims in Redis, shared by every worker and host."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Final

import orjson

from influencer_stats.algebras import EventLog
from influencer_stats.domain.models import VideoEntry, VideoId, VideoStats
from influencer_stats.interpreters.redis_faults import REDIS_FAULTS
from influencer_stats.interpreters.redis_keys import RedisKeys, as_text
from influencer_stats.interpreters.redis_topology import RedisClient, read_many
from influencer_stats.memo import BoundedMemo


class RedisVideoEntries:
    """``VideoEntries`` in Redis, shared by every worker and host.

    A read is one ``MGET`` (on a Cluster, one per slot: ``read_many``); a write one pipeline of ``SET … PX`` (no
    transaction: each entry stands alone), keys from ``RedisKeys.video``, each
    kept ``keep_ms``. A value is ``[stored_at, views, likes, comments,
    dislikes]``, or ``[stored_at]`` for a missing video. The same value is read
    again and again until the video is refreshed, so each is decoded once
    (``decoded`` of them remembered). Redis failing never fails a fetch: a
    failed read is no entries (the caller fetches), a failed write is dropped;
    each is logged as a warning.
    """

    def __init__(
        self,
        client: RedisClient,
        key: Callable[[str], str],
        keep_ms: int,
        log: EventLog,
        *,
        decoded: int,
    ) -> None:
        self._redis = client
        self._key = key
        self._keep_ms = keep_ms
        self._log = log
        # Decoding on every read was 20 % of a process's CPU (perf/RESULTS.md: "decoded once").
        self._decoded: BoundedMemo[bytes | str, VideoEntry] = BoundedMemo(decoded)

    async def get_many(self, ids: Sequence[VideoId]) -> Mapping[VideoId, VideoEntry]:
        if not ids:
            return {}
        try:
            raws = await read_many(self._redis, [self._key(i) for i in ids])
        except REDIS_FAULTS as exc:
            self._log.warning("videos.cache_unavailable", operation="read", error=type(exc).__name__)
            return {}
        found, decoded = {}, self._decoded
        for video_id, raw in zip(ids, raws, strict=True):
            if raw is None:
                continue
            held = decoded.get(raw)
            if held is None:
                held = _decode(raw)
                if held is None:
                    continue
                decoded.keep(raw, held)
            found[video_id] = held
        return found

    async def put_many(self, entries: Mapping[VideoId, VideoEntry]) -> None:
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                for video_id, held in entries.items():
                    pipe.set(self._key(video_id), _encode(held), px=self._keep_ms)
                await pipe.execute()
        except REDIS_FAULTS as exc:
            self._log.warning("videos.cache_unavailable", operation="write", error=type(exc).__name__)


def _encode(held: VideoEntry) -> bytes:
    s = held.stats
    if s is None:
        return orjson.dumps([held.stored_at])
    return orjson.dumps([held.stored_at, s.views, s.likes, s.comments, s.dislikes])


def _decode(raw: bytes | str | None) -> VideoEntry | None:
    if raw is None:
        return None
    try:
        values = orjson.loads(raw)
        if len(values) == 1:
            return VideoEntry(None, float(values[0]))
        stored_at, views, likes, comments, dislikes = values
        return VideoEntry(VideoStats(int(views), int(likes), int(comments), int(dislikes)), float(stored_at))
    except (TypeError, ValueError):  # written by another release: a miss
        return None


#: Lua, put before the scripts that read entries (push, take, claim): whether the entry at
#: ``key`` was stored less than ``fresh`` seconds before ``now``. Its stored_at is the first
#: number of the JSON array ``_encode`` writes.
_IS_FRESH: Final = """
local function is_fresh(key, now, fresh)
  local raw = redis.call('GET', key)
  local stored = raw and tonumber(string.match(raw, '^%[([^,%]]+)'))
  if not stored then return false end  -- no entry (GET gives false), or not one of ours
  return now - stored < fresh
end
"""

#: Queue the ids (ARGV[5..]) whose entries (KEYS[2..]) are missing or stale, unless queued;
#: once ``room`` wait, take them out. ARGV: now, fresh_s, room, keep_ms.
_PUSH: Final = """
local now, fresh, room = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
for k = 2, #KEYS do
  if not is_fresh(KEYS[k], now, fresh) then
    redis.call('ZADD', KEYS[1], 'NX', now, ARGV[3 + k])
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
if redis.call('ZCARD', KEYS[1]) < room then return {} end
local popped = redis.call('ZPOPMIN', KEYS[1], room)
local ids = {}
for i = 1, #popped, 2 do ids[#ids + 1] = popped[i] end
return ids
"""

#: Take up to ARGV[1] of the oldest (all of them if ARGV[5] is empty, else only if the oldest
#: was queued at or before ARGV[5]), less those whose entry (key ARGV[4] .. id, in the queue's
#: slot) is fresh by now (ARGV[2]) and fresh_s (ARGV[3]). Returns {left, id...}.
_TAKE: Final = """
local room, now, fresh, prefix = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
if ARGV[5] ~= '' then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if #oldest == 0 or tonumber(oldest[2]) > tonumber(ARGV[5]) then
    return {#oldest > 0 and 1 or 0}
  end
end
local popped = redis.call('ZPOPMIN', KEYS[1], room)
local out = {redis.call('ZCARD', KEYS[1]) > 0 and 1 or 0}
for i = 1, #popped, 2 do
  if not is_fresh(prefix .. popped[i], now, fresh) then out[#out + 1] = popped[i] end
end
return out
"""


class RedisStaleQueue:
    """``StaleQueue`` in Redis (``RedisKeys.stale_videos``), shared by every worker and host.

    A sorted set per video shard (``RedisKeys.video_shard``: one on one server
    or Sentinel, several on a Cluster), scored by when each id was queued. Each
    operation is one Lua script per shard, so two workers never take the same
    id: a video stale on every worker is refreshed by one call, and the partial
    calls a wait ends are one per wait for all workers, not one per worker. An
    id is queued only while its entry is stale (read in the same step), and
    dropped when taken if another worker refreshed it meanwhile. The entries'
    keys share their queue's hash slot, so the scripts work on Cluster too.
    Never more than ``room`` wait in one shard: the push that makes ``room``
    takes them out. (On a Cluster a shard fills more slowly than one queue
    would: more of its calls are the partial ones a wait ends.)
    """

    def __init__(
        self,
        client: RedisClient,
        keys: RedisKeys,
        room: int,
        keep_ms: int,
        log: EventLog,
    ) -> None:
        self._push = client.register_script(_IS_FRESH + _PUSH)
        self._take = client.register_script(_IS_FRESH + _TAKE)
        self._keys = keys
        self._shards = keys.all_video_shards()
        self._next = 0  # the shard a ``take`` starts from, in turn
        self._room = room
        self._keep_ms = keep_ms
        self._log = log

    async def push(self, ids: Sequence[VideoId], now: float, fresh_s: float) -> list[VideoId]:
        groups = self._keys.by_shard(ids)
        pushed = await asyncio.gather(*(self._push_shard(s, g, now, fresh_s) for s, g in groups.items()))
        return [i for taken in pushed for i in taken]

    async def _push_shard(self, shard: str, ids: list[str], now: float, fresh_s: float) -> list[VideoId]:
        keys = [self._keys.stale_videos(shard), *(self._keys.video(i) for i in ids)]
        try:
            taken = await self._push(keys=keys, args=[now, fresh_s, self._room, self._keep_ms, *ids])
        except REDIS_FAULTS as exc:
            self._log.warning("videos.stale_queue_unavailable", operation="push", error=type(exc).__name__)
            return [VideoId(i) for i in ids]  # refresh them now rather than never
        return [VideoId(as_text(i)) for i in taken]

    async def take(self, room: int, now: float, fresh_s: float) -> list[VideoId]:
        taken: list[VideoId] = []
        start, self._next = self._next, (self._next + 1) % len(self._shards)
        for shard in self._shards[start:] + self._shards[:start]:
            taken += (await self._taken(shard, room - len(taken), now, fresh_s, ""))[0]
            if len(taken) >= room:
                break
        return taken

    async def take_due(self, cutoff: float, now: float, fresh_s: float) -> tuple[list[VideoId], bool]:
        shards = await asyncio.gather(
            *(self._taken(s, self._room, now, fresh_s, repr(cutoff)) for s in self._shards)
        )
        return [i for ids, _ in shards for i in ids], any(left for _, left in shards)

    async def _taken(
        self, shard: str, room: int, now: float, fresh_s: float, cutoff: str
    ) -> tuple[list[VideoId], bool]:
        entry_prefix = self._keys.video_entry_prefix(shard)
        try:
            left, *ids = await self._take(
                keys=[self._keys.stale_videos(shard)], args=[room, now, fresh_s, entry_prefix, cutoff]
            )
        except REDIS_FAULTS as exc:
            self._log.warning("videos.stale_queue_unavailable", operation="take", error=type(exc).__name__)
            return [], False
        return [VideoId(as_text(i)) for i in ids], bool(left)


#: Claim each claim key KEYS[k] (k <= n, half the keys) for ARGV[1] for ARGV[2] ms unless another
#: token holds it or its entry KEYS[n + k] is fresh (ARGV[3]: now, ARGV[4]: fresh_s); returns the
#: 1-based positions of those not claimed.
_CLAIM: Final = """
local n, now, fresh = #KEYS / 2, tonumber(ARGV[3]), tonumber(ARGV[4])
local theirs = {}
for k = 1, n do
  if is_fresh(KEYS[n + k], now, fresh)
    or (not redis.call('SET', KEYS[k], ARGV[1], 'NX', 'PX', ARGV[2]) and redis.call('GET', KEYS[k]) ~= ARGV[1]) then
    theirs[#theirs + 1] = k
  end
end
return theirs
"""

#: Delete each key (KEYS) that ARGV[1] holds, and no other.
_RELEASE: Final = """
for k = 1, #KEYS do
  if redis.call('GET', KEYS[k]) == ARGV[1] then redis.call('DEL', KEYS[k]) end
end
return 0
"""


#: Of the claim keys KEYS[1..n], those that are gone, each with its entry (KEYS[n+k], '' if none):
#: returns {k, entry, ...}.
_SETTLED: Final = """
local n = #KEYS / 2
local out = {}
for k = 1, n do
  if redis.call('EXISTS', KEYS[k]) == 0 then
    out[#out + 1] = k
    out[#out + 1] = redis.call('GET', KEYS[n + k]) or ''
  end
end
return out
"""


class RedisMissClaims:
    """``MissClaims`` in Redis (``RedisKeys.video_claim``), shared by every worker and host.

    A claim is a key holding this worker's ``token`` for ``hold_ms`` (``SET NX PX``);
    claiming and releasing are one script per video shard each, so two workers never
    both claim a video, and a worker releases only its own claims; ``settled`` reads
    the claims and the entries in one script per shard. A claim shares its video's
    slot, so the scripts work on Cluster too; a call's shards go side by side.
    """

    def __init__(self, client: RedisClient, keys: RedisKeys, token: str, hold_ms: int, log: EventLog) -> None:
        self._claim = client.register_script(_IS_FRESH + _CLAIM)
        self._release = client.register_script(_RELEASE)
        self._settled = client.register_script(_SETTLED)
        self._keys = keys
        self._token = token
        self._hold_ms = hold_ms
        self._log = log

    async def claim(self, ids: Sequence[VideoId], now: float, fresh_s: float) -> list[VideoId]:
        groups = self._keys.by_shard(ids).values()
        theirs = await asyncio.gather(*(self._claim_shard(g, now, fresh_s) for g in groups))
        return [VideoId(i) for claimed in theirs for i in claimed]

    async def _claim_shard(self, ids: list[str], now: float, fresh_s: float) -> list[str]:
        keys = [*(self._keys.video_claim(i) for i in ids), *(self._keys.video(i) for i in ids)]
        try:
            theirs = await self._claim(keys=keys, args=[self._token, self._hold_ms, now, fresh_s])
        except REDIS_FAULTS as exc:
            self._log.warning("videos.claims_unavailable", operation="claim", error=type(exc).__name__)
            return []  # call for all of them
        return [ids[int(k) - 1] for k in theirs]

    async def release(self, ids: Sequence[VideoId]) -> None:
        await asyncio.gather(*(self._release_shard(g) for g in self._keys.by_shard(ids).values()))

    async def _release_shard(self, ids: list[str]) -> None:
        try:
            await self._release(keys=[self._keys.video_claim(i) for i in ids], args=[self._token])
        except REDIS_FAULTS as exc:
            self._log.warning("videos.claims_unavailable", operation="release", error=type(exc).__name__)

    async def settled(self, ids: Sequence[VideoId]) -> Mapping[VideoId, VideoEntry | None]:
        groups = self._keys.by_shard(ids).values()
        shards = await asyncio.gather(*(self._settled_shard(g) for g in groups))
        return {VideoId(i): entry for found in shards for i, entry in found.items()}

    async def _settled_shard(self, ids: list[str]) -> dict[str, VideoEntry | None]:
        keys = [*(self._keys.video_claim(i) for i in ids), *(self._keys.video(i) for i in ids)]
        try:
            flat = await self._settled(keys=keys)
        except REDIS_FAULTS as exc:
            self._log.warning("videos.claims_unavailable", operation="settled", error=type(exc).__name__)
            return {}
        return {ids[int(k) - 1]: _decode(raw or None) for k, raw in zip(flat[::2], flat[1::2], strict=True)}
