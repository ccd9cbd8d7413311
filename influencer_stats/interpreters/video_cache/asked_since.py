"""What refresh-ahead needs to know: when each video was fetched, and which were asked for since."""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict
from collections.abc import Container, Mapping, Sequence

from influencer_stats.domain.models import VideoEntry, VideoId


class AskedSince:
    """The per-video cache's refresh-ahead bookkeeping, at most ``max_entries`` videos each.

    - ``fetched(ids, at)``: this process stored them (asked for since: from now on).
    - ``learned(held)``: entries another worker or host stored, newer than what this
      process knew: as if fetched here.
    - ``asked(held)``: a fetch asked for these held videos (a miss is fetched at once,
      and one whose call fails leaves no trace here: nothing grows with failing asks).
    - ``due_soon(...)``: the videos to top a call up with.

    Both maps forget the oldest first once full.
    """

    def __init__(self, max_entries: int) -> None:
        self._max = max_entries
        self._fetched_at: OrderedDict[VideoId, float] = OrderedDict()
        # The held videos asked for since they were fetched, in the order first asked
        # (so roughly oldest first).
        self._asked: dict[VideoId, None] = {}

    def __len__(self) -> int:
        """Videos asked for since they were fetched."""
        return len(self._asked)

    def fetched_at(self, video_id: VideoId) -> float:
        """When this process fetched (or learned of) ``video_id``; -inf: not as far as it knows."""
        return self._fetched_at.get(video_id, -math.inf)

    def oldest_asked(self, count: int) -> list[VideoId]:
        """The ``count`` videos asked for longest ago."""
        return list(itertools.islice(self._asked, count))

    def asked(self, held: Mapping[VideoId, VideoEntry]) -> None:
        asked = self._asked
        asked.update(dict.fromkeys(held))  # an id asked before keeps its place
        over = len(asked) - self._max
        if over > 0:  # the longest asked go: refreshed ahead already, or due soon anyway
            for video_id in list(itertools.islice(asked, over)):
                del asked[video_id]

    def fetched(self, ids: Sequence[VideoId], at: float) -> None:
        fetched_at, asked = self._fetched_at, self._asked
        for video_id in ids:
            fetched_at[video_id] = at
            fetched_at.move_to_end(video_id)
            asked.pop(video_id, None)
        self._trim()

    def learned(self, held: Mapping[VideoId, VideoEntry]) -> None:
        """Entries another worker or host stored (so asked for since only from now on)."""
        fetched_at, asked = self._fetched_at, self._asked
        for video_id, entry in held.items():
            known = fetched_at.get(video_id)
            if known is None or known < entry.stored_at:
                fetched_at[video_id] = entry.stored_at
                fetched_at.move_to_end(video_id)
                asked.pop(video_id, None)
        self._trim()

    def due_soon(self, room: int, taken: Container[VideoId], now: float, quarter_s: float) -> list[VideoId]:
        """Up to ``room`` videos asked for since they were fetched, at least ``quarter_s`` ago
        (a quarter of their freshness: hot videos are not refreshed again a moment after), not
        ``taken`` (in the call already, or in flight), those asked longest ago first. The scan
        stays short (4 × ``room``); videos not known to be fetched here are forgotten."""
        asked, fetched_at = self._asked, self._fetched_at
        extra: list[VideoId] = []
        unknown: list[VideoId] = []
        for scanned, video_id in enumerate(asked):
            if len(extra) >= room or scanned >= 4 * room:
                break
            at = fetched_at.get(video_id)
            if at is None:
                unknown.append(video_id)  # read from a shared cache, or forgotten
            elif now - at >= quarter_s and video_id not in taken:
                extra.append(video_id)
        for video_id in unknown:
            del asked[video_id]
        return extra

    def _trim(self) -> None:
        fetched_at = self._fetched_at
        while len(fetched_at) > self._max:
            gone, _ = fetched_at.popitem(last=False)
            self._asked.pop(gone, None)
