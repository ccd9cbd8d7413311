"""Where the service keeps its data in Redis: the one key layout of every Redis interpreter."""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RedisKeys:
    """The keys of the collection store and the shared stats cache, under one ``prefix``.

    - ``{prefix}:col:{<id>}``: a collection's videos (``RedisCollectionStore``).
    - ``{prefix}:ver:{<id>}``: a collection's version, bumped by every write
      (by the store in the write's ``MULTI``, and by ``RedisCachedStats.invalidate``).
    - ``{prefix}:rev:{<id>}``: the revision of the collection's last write, a random token
      (``RedisCollectionStore``), set and deleted with the videos by one script.
    - ``{prefix}:stats:{<id>}``: a collection's cached stats (``RedisCachedStats``).
    - ``{prefix}:hist:{<id>}``: a collection's stats history (``RedisStatsHistory``), a
      sorted set of points by time; ``{prefix}:hist-claim:{<id>}``, the last interval whose
      snapshot a worker claimed.
    - ``{prefix}:source:{<id>}``: where a collection read from YouTube came from
      (``RedisCollectionSources``), ``<kind>:<playlist or channel id>``;
      ``{prefix}:source-rev:{<id>}``, the collection's revision it was kept with;
      ``{prefix}:source-claim:{<id>}``, the last interval whose re-read a worker claimed.
    - ``{prefix}:sorted-ids:{{prefix}:ids}``: the collection ids as a sorted set
      (every score 0, so ordered by bytes), which ``ids`` pages with
      ``ZRANGEBYLEX``. Its hash tag is the name of the set below, so both live
      in one slot and one ``MULTI`` updates both, on Cluster too.
    - ``{prefix}:ids``: the set that indexed the ids before the sorted set (it
      cannot be paged in order). Still written, so an older version running
      beside this one (a rolling deploy, a rollback) lists every id, and read to
      fill the sorted set from data deployed before it existed.

    - ``{prefix}:video:{<shard>}:<id>``: one video's cached counters
      (``RedisVideoEntries``). ``<shard>`` is ``{prefix}:videos`` when
      ``video_shards`` is 1 (one server, Sentinel: every video in one slot),
      else ``{prefix}:videos:<n>``, ``n`` the video id's CRC-32 modulo
      ``video_shards`` (a Cluster: the videos spread over that many slots, so
      over every shard, not all on one).
    - ``{prefix}:stale:{<shard>}``: a shard's videos waiting for a call to
      refresh them (``RedisStaleQueue``), a sorted set by when each was queued;
      in its videos' slot, so one script reads the queue and their entries.
    - ``{prefix}:claim:{<shard>}:<id>``: which worker is calling for a video it
      missed (``RedisMissClaims``), its token, kept a call's deadline.
    - ``{prefix}:quota:{{prefix}:quota}:<day>``: units spent on one quota day
      (``RedisQuotaLedger``), a hash (the count, and what recounts it when Redis
      loses it; a string, as a former version kept it, is carried over).

    The braces are a Cluster hash tag: every key of one collection lives in one
    slot, so a ``MULTI`` or ``MGET`` over them works on Cluster too. Deployed data
    is read through these exact strings: changing one orphans it.
    """

    prefix: str
    video_shards: int = 1

    def video_shard(self, video_id: str) -> str:
        """The hash tag of ``video_id``'s shard: its entry, claim and queue share its slot."""
        if self.video_shards == 1:
            return f"{self.prefix}:videos"
        return f"{self.prefix}:videos:{zlib.crc32(video_id.encode()) % self.video_shards}"

    def by_shard(self, ids: Iterable[str]) -> dict[str, list[str]]:
        """``ids`` grouped by shard, in order within each: what one script may read together."""
        groups: dict[str, list[str]] = {}
        for video_id in ids:
            groups.setdefault(self.video_shard(video_id), []).append(video_id)
        return groups

    def all_video_shards(self) -> list[str]:
        """Every shard's hash tag."""
        if self.video_shards == 1:
            return [f"{self.prefix}:videos"]
        return [f"{self.prefix}:videos:{n}" for n in range(self.video_shards)]

    def collection(self, collection_id: str) -> str:
        return f"{self.prefix}:col:{{{collection_id}}}"

    def version(self, collection_id: str) -> str:
        return f"{self.prefix}:ver:{{{collection_id}}}"

    def revision(self, collection_id: str) -> str:
        return f"{self.prefix}:rev:{{{collection_id}}}"

    def stats(self, collection_id: str) -> str:
        return f"{self.prefix}:stats:{{{collection_id}}}"

    def history(self, collection_id: str) -> str:
        return f"{self.prefix}:hist:{{{collection_id}}}"

    def history_claim(self, collection_id: str) -> str:
        return f"{self.prefix}:hist-claim:{{{collection_id}}}"

    def source(self, collection_id: str) -> str:
        return f"{self.prefix}:source:{{{collection_id}}}"

    def source_revision(self, collection_id: str) -> str:
        return f"{self.prefix}:source-rev:{{{collection_id}}}"

    def source_claim(self, collection_id: str) -> str:
        return f"{self.prefix}:source-claim:{{{collection_id}}}"

    def video(self, video_id: str) -> str:
        return f"{self.prefix}:video:{{{self.video_shard(video_id)}}}:{video_id}"

    def video_entry_prefix(self, shard: str) -> str:
        """What a video's entry key is in ``shard``, less the video id."""
        return f"{self.prefix}:video:{{{shard}}}:"

    def video_claim(self, video_id: str) -> str:
        return f"{self.prefix}:claim:{{{self.video_shard(video_id)}}}:{video_id}"

    def stale_videos(self, shard: str) -> str:
        return f"{self.prefix}:stale:{{{shard}}}"

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
