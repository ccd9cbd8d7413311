"""The per-video cache's entries in Redis, shared by every worker and host."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import orjson
import redis.asyncio as redis

from influencer_stats.algebras import EventLog
from influencer_stats.interpreters.videos.video_cache import Held
from influencer_stats.logic.models import VideoId, VideoStats


class RedisVideoEntries:
    """``VideoEntries`` in Redis, shared by every worker and host.

    A read is one ``MGET``; a write one pipeline of ``SET … PX`` (no
    transaction: each entry stands alone), keys from ``RedisKeys.video``, each
    kept ``keep_ms``. A value is ``[stored_at, views, likes, comments,
    dislikes]``, or ``[stored_at]`` for a missing video. Redis failing never
    fails a fetch: a failed read is no entries (the caller fetches), a failed
    write is dropped; each is logged as a warning.
    """

    def __init__(self, client: redis.Redis, key: Callable[[str], str], keep_ms: int, log: EventLog) -> None:
        self._redis = client
        self._key = key
        self._keep_ms = keep_ms
        self._log = log

    async def get_many(self, ids: Sequence[VideoId]) -> Mapping[VideoId, Held]:
        try:
            raws = await self._redis.mget([self._key(i) for i in ids])
        except (redis.RedisError, OSError) as exc:
            self._log.warning("videos.cache_unavailable", operation="read", error=type(exc).__name__)
            return {}
        found = {}
        for video_id, raw in zip(ids, raws, strict=True):
            held = _decode(raw)
            if held is not None:
                found[video_id] = held
        return found

    async def put_many(self, entries: Mapping[VideoId, Held]) -> None:
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                for video_id, held in entries.items():
                    pipe.set(self._key(video_id), _encode(held), px=self._keep_ms)
                await pipe.execute()
        except (redis.RedisError, OSError) as exc:
            self._log.warning("videos.cache_unavailable", operation="write", error=type(exc).__name__)


def _encode(held: Held) -> bytes:
    s = held.stats
    if s is None:
        return orjson.dumps([held.stored_at])
    return orjson.dumps([held.stored_at, s.views, s.likes, s.comments, s.dislikes])


def _decode(raw: bytes | str | None) -> Held | None:
    if raw is None:
        return None
    try:
        values = orjson.loads(raw)
        if len(values) == 1:
            return Held(None, float(values[0]))
        stored_at, views, likes, comments, dislikes = values
        return Held(VideoStats(int(views), int(likes), int(comments), int(dislikes)), float(stored_at))
    except (TypeError, ValueError):  # written by another release: a miss
        return None
