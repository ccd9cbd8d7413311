"""Where a per-video cache keeps its entries: this process, or Redis for every worker."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence

from influencer_stats.domain.models import CacheInfo, VideoBatch, VideoEntry, VideoId, VideoStats


class MemoryVideoEntries:
    """``VideoEntries`` in this process: at most ``max_entries``, least recently used evicted."""

    def __init__(self, max_entries: int) -> None:
        self._max = max_entries
        self._entries: OrderedDict[VideoId, VideoEntry] = OrderedDict()

    async def get_many(self, ids: Sequence[VideoId]) -> Mapping[VideoId, VideoEntry]:
        entries = self._entries
        found = {}
        for video_id in ids:
            held = entries.get(video_id)
            if held is not None:
                entries.move_to_end(video_id)
                found[video_id] = held
        return found

    async def put_many(self, entries: Mapping[VideoId, VideoEntry]) -> None:
        self._entries.update(entries)
        for video_id in entries:
            self._entries.move_to_end(video_id)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)


_STALE_ORDER = {None: 0, "revalidating": 1, "stale-if-error": 2, "quota-exhausted": 3}


def oldest_info(infos: Sequence[CacheInfo]) -> CacheInfo | None:
    """One answer's freshness: the oldest entry's age, the least ttl left, the most serious staleness."""
    if not infos:
        return None
    reason = max((i.stale_reason for i in infos), key=_STALE_ORDER.__getitem__)
    return CacheInfo(True, max(i.age_s for i in infos), min(i.ttl_s for i in infos), reason)


def batch_of(
    ids: Sequence[VideoId], held: Mapping[VideoId, VideoEntry], cache: CacheInfo | None
) -> VideoBatch:
    """The answer for ``ids`` from their entries (every id is held)."""
    stats: dict[VideoId, VideoStats] = {}
    missing: list[VideoId] = []
    for video_id in ids:
        found = held[video_id].stats
        if found is None:
            missing.append(video_id)
        else:
            stats[video_id] = found
    return VideoBatch(stats, tuple(missing), cache)
