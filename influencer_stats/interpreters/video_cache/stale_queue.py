"""Where stale videos wait for a ``videos.list`` call to ride: this process, or Redis for every worker.

A call costs one quota unit whatever its ids (≤ 50), so the per-video cache
does not refresh a stale video with a call of its own: it queues the video,
and the queue hands it to the next call that has room (a miss's call), or
leaves a call's worth together. When every worker queues in one place
(Redis), a video stale on every worker is refreshed once, not once per worker.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from influencer_stats.domain.models import VideoId


class MemoryStaleQueue:
    """``StaleQueue`` in this process: a dict in the order ids were queued, never more than ``room``.

    It holds no entries, so it cannot tell which ids were refreshed meanwhile:
    the cache drops those itself (it made every call of this process).
    """

    def __init__(self, room: int) -> None:
        self._room = room
        self._queued: dict[VideoId, float] = {}

    async def push(self, ids: Sequence[VideoId], now: float, fresh_s: float) -> list[VideoId]:
        queued = self._queued
        for video_id in ids:
            queued.setdefault(video_id, now)
        if len(queued) < self._room:
            return []
        return self._pop(self._room)

    async def take(self, room: int, now: float, fresh_s: float) -> list[VideoId]:
        return self._pop(room)

    async def take_due(self, cutoff: float, now: float, fresh_s: float) -> tuple[list[VideoId], bool]:
        queued = self._queued
        oldest = next(iter(queued.values()), None)
        if oldest is None or oldest > cutoff:
            return [], bool(queued)
        taken = self._pop(self._room)
        return taken, bool(queued)

    def _pop(self, room: int) -> list[VideoId]:
        queued = self._queued
        taken = list(itertools.islice(queued, room))
        for video_id in taken:
            del queued[video_id]
        return taken

    def __len__(self) -> int:
        return len(self._queued)
