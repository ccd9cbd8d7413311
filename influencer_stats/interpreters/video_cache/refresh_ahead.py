"""Refresh-ahead: a per-video cache's call with room is topped up with videos that are due."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from influencer_stats.algebras import CacheMetrics
from influencer_stats.algebras.video_cache import StaleQueue, VideoEntries
from influencer_stats.domain.models import VideoEntry, VideoId
from influencer_stats.interpreters.video_cache.asked_since import AskedSince
from influencer_stats.interpreters.video_cache.freshness import Freshness


class RefreshAhead:
    """What rides along a per-video cache's calls, up to ``fill_to`` ids a call (the client's).

    A call costs one quota unit whatever its ids, so a call of fewer is topped
    up: first with videos waiting in the ``stale`` queue (found stale, due
    now), then with videos due soon: asked for since they were fetched
    (``since``), at least a quarter of their freshness ago, those asked
    longest ago first. Popular videos so ride for free instead of costing a
    call of their own later. With ``shared`` entries (workers sharing Redis),
    entries other workers stored count as fetched here too: before topping a
    call up, the oldest asked are read again from ``entries``, so what another
    worker refreshed meanwhile is not called for twice.
    """

    def __init__(
        self,
        since: AskedSince,
        stale: StaleQueue,
        entries: VideoEntries,
        clock: Callable[[], float],
        freshness: Freshness,
        metrics: CacheMetrics,
        *,
        fill_to: int,
        shared: bool,
    ) -> None:
        if fill_to < 1:
            raise ValueError("refresh-ahead needs calls of at least one id")
        self._since = since
        self._stale = stale
        self._entries = entries
        self._clock = clock
        self._freshness = freshness
        self._metrics = metrics
        self._fill_to = fill_to
        self._shared = shared

    def asked(self, held: Mapping[VideoId, VideoEntry]) -> None:
        """A fetch asked for these held videos (with shared entries, learning any stored by others)."""
        if self._shared:
            self._since.learned(held)
        self._since.asked(held)

    def fetched(self, ids: Sequence[VideoId], at: float) -> None:
        """This process stored ``ids`` at ``at``."""
        self._since.fetched(ids, at)

    def learned(self, entries: Mapping[VideoId, VideoEntry]) -> None:
        """Entries another worker stored (with shared entries: as if fetched here)."""
        if self._shared:
            self._since.learned(entries)

    def still_stale(self, taken: Sequence[VideoId], in_flight: Mapping[VideoId, object]) -> list[VideoId]:
        """Queued stale videos less those refreshed meanwhile (here, or by another worker as far
        as this one has read) and those ``in_flight``."""
        fresh_s, now, since = self._freshness.fresh_s(), self._clock(), self._since
        return [i for i in taken if i not in in_flight and now - since.fetched_at(i) >= fresh_s]

    async def riders(
        self, ids: Sequence[VideoId], in_flight: Mapping[VideoId, object], *, queued: bool
    ) -> list[VideoId]:
        """The videos that fill the last call of ``ids`` to ``fill_to`` ids (the client splits
        them in calls of that many), none of them in ``ids`` or ``in_flight``: queued stale videos
        first (unless the call is for ``queued`` ones already), then videos due soon."""
        room = -len(ids) % self._fill_to  # the room left in the last call of the ids
        added: list[VideoId] = []
        if not queued and room:
            taken = await self._stale.take(room, self._clock(), self._freshness.fresh_s())
            known = set(ids)
            added += [i for i in self.still_stale(taken, in_flight) if i not in known]
        if len(added) < room:
            since = self._since
            if self._shared:  # what other workers refreshed meanwhile is not due here either
                since.learned(await self._entries.get_many(since.oldest_asked(3 * room)))
            # Videos due soon, not in flight: each would otherwise cost a call of its own later.
            skip = {*ids, *added} | in_flight.keys()
            quarter_s = self._freshness.fresh_s() / 4
            ahead = since.due_soon(room - len(added), skip, self._clock(), quarter_s)
            if ahead:
                self._metrics.video_cache_event("refreshed_ahead", len(ahead))
            added += ahead
        return added
