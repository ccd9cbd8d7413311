"""Where the service keeps its data in Redis: the one key layout of every Redis interpreter."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RedisKeys:
    """The keys of the collection store and the shared stats cache, under one ``prefix``.

    - ``{prefix}:col:{<id>}``: a collection's videos (``RedisCollectionStore``).
    - ``{prefix}:ver:{<id>}``: a collection's version, bumped by every write
      (by the store in the write's ``MULTI``, and by ``RedisCachedStats.invalidate``).
    - ``{prefix}:stats:{<id>}``: a collection's cached stats (``RedisCachedStats``).
    - ``{prefix}:sorted-ids:{{prefix}:ids}``: the collection ids as a sorted set
      (every score 0, so ordered by bytes), which ``ids`` pages with
      ``ZRANGEBYLEX``. Its hash tag is the name of the set below, so both live
      in one slot and one ``MULTI`` updates both, on Cluster too.
    - ``{prefix}:ids``: the set that indexed the ids before the sorted set (it
      cannot be paged in order). Still written, so an older version running
      beside this one (a rolling deploy, a rollback) lists every id, and read to
      fill the sorted set from data deployed before it existed.

    - ``{prefix}:video:{{prefix}:videos}:<id>``: one video's cached counters
      (``RedisVideoEntries``). All in one slot, so one ``MGET`` reads a whole
      collection's videos on Cluster too (the price: they live on one shard).
    - ``{prefix}:stale:{{prefix}:videos}``: videos waiting for a call to refresh
      them (``RedisStaleQueue``), a sorted set by when each was queued; in the
      videos' slot, so one script reads the queue and their entries.
    - ``{prefix}:claim:{{prefix}:videos}:<id>``: which worker is calling for a
      video it missed (``RedisMissClaims``), its token, kept a call's deadline.
    - ``{prefix}:quota:{{prefix}:quota}:<day>``: units spent on one quota day
      (``RedisQuotaLedger``).

    The braces are a Cluster hash tag: every key of one collection lives in one
    slot, so a ``MULTI`` or ``MGET`` over them works on Cluster too. Deployed data
    is read through these exact strings: changing one orphans it.
    """

    prefix: str

    def collection(self, collection_id: str) -> str:
        return f"{self.prefix}:col:{{{collection_id}}}"

    def version(self, collection_id: str) -> str:
        return f"{self.prefix}:ver:{{{collection_id}}}"

    def stats(self, collection_id: str) -> str:
        return f"{self.prefix}:stats:{{{collection_id}}}"

    def video(self, video_id: str) -> str:
        return f"{self.prefix}:video:{{{self.prefix}:videos}}:{video_id}"

    def video_claim(self, video_id: str) -> str:
        return f"{self.prefix}:claim:{{{self.prefix}:videos}}:{video_id}"

    @property
    def stale_videos(self) -> str:
        return f"{self.prefix}:stale:{{{self.prefix}:videos}}"

    def quota(self, day: str) -> str:
        return f"{self.prefix}:quota:{{{self.prefix}:quota}}:{day}"

    @property
    def index(self) -> str:
        return f"{self.prefix}:ids"

    @property
    def sorted_index(self) -> str:
        return f"{self.prefix}:sorted-ids:{{{self.index}}}"


def as_text(raw: bytes | str) -> str:
    """A key or member read back from Redis as text (bytes unless the client decodes replies)."""
    return raw.decode() if isinstance(raw, bytes) else raw
