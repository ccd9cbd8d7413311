"""The calls that fill a per-video cache: one in flight per video, kept whoever stops waiting."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from returns.result import Failure, Result, Success

from influencer_stats.algebras import CacheMetrics, VideoStatsSource
from influencer_stats.algebras.video_cache import VideoEntries
from influencer_stats.domain.models import UpstreamError, VideoEntry, VideoId
from influencer_stats.interpreters.video_cache.freshness import Freshness
from influencer_stats.interpreters.video_cache.miss_claims import SharedMisses
from influencer_stats.interpreters.video_cache.refresh_ahead import RefreshAhead
from influencer_stats.interpreters.youtube.youtube_api import MAX_IDS_PER_CALL

#: What a call brings: an entry per id it was for, or the first failure.
Landed = Result[dict[VideoId, VideoEntry], UpstreamError]
Call = asyncio.Task[Landed]


class VideoCalls:
    """Calls ``inner`` for the videos a per-video cache lacks, storing each in ``entries``.

    - Single-flight per video: ``load`` starts one call (a task) for the ids
      not ``in_flight`` and returns it with the calls already bringing the
      others. Nobody cancels a call: a caller that stops waiting leaves it to
      fill the cache (it is paid for).
    - A call asks ``inner`` a call's worth (50 ids) at a time, and stores each
      as soon as it lands: what a failed or slow one does not hold up is kept.
    - With ``ahead``, a call with room is topped up (``RefreshAhead.riders``).
    - With ``misses`` (workers sharing entries), a call first claims its ids;
      those another worker claimed are waited for, and called for here only
      if their entries do not come.
    """

    def __init__(
        self,
        inner: VideoStatsSource,
        entries: VideoEntries,
        clock: Callable[[], float],
        freshness: Freshness,
        metrics: CacheMetrics,
        *,
        ahead: RefreshAhead | None,
        misses: SharedMisses | None,
    ) -> None:
        self._inner = inner
        self._entries = entries
        self._clock = clock
        self._freshness = freshness
        self._metrics = metrics
        self._ahead = ahead
        self._misses = misses
        self.in_flight: dict[VideoId, Call] = {}  # each video being called for, and its call

    def load(self, ids: Sequence[VideoId], *, queued: bool = False) -> set[Call]:
        """The calls that bring ``ids``: those in flight, plus one started now for the others.
        ``queued``: the ids were taken from the stale queue (claimed by nobody, topped up with
        no other queued ones)."""
        in_flight = self.in_flight
        calls = {in_flight[i] for i in ids if i in in_flight}
        lacking = [i for i in ids if i not in in_flight]
        if lacking:
            call = asyncio.create_task(self._call(lacking, queued), name=f"video-cache:{len(lacking)}")
            for video_id in lacking:
                in_flight[video_id] = call
            calls.add(call)
        return calls

    async def _call(self, ids: list[VideoId], queued: bool) -> Landed:
        claimed_by_others: list[VideoId] = []  # misses another worker is calling for
        misses = None if queued else self._misses
        try:
            if misses is not None:
                claimed_by_others = await misses.claim(ids, self._clock(), self._freshness.fresh_s())
                if claimed_by_others:
                    skip = set(claimed_by_others)
                    ids[:] = [i for i in ids if i not in skip]
            claimed = list(ids) if misses is not None else []
            fetched: dict[VideoId, VideoEntry] = {}
            if ids:
                try:
                    if self._ahead is not None:
                        self._ride_along(ids, await self._ahead.riders(ids, self.in_flight, queued=queued))
                    outcome = await self._stored(ids)
                finally:
                    if misses is not None and claimed:
                        await misses.release(claimed)
                if isinstance(outcome, Failure):
                    return outcome
                fetched = outcome.unwrap()
            if claimed_by_others:
                landed = await self._claimed_elsewhere(claimed_by_others)
                return landed.map(lambda waited: {**fetched, **waited})
            return Success(fetched)
        finally:
            me = asyncio.current_task()
            in_flight = self.in_flight
            for video_id in (*ids, *claimed_by_others):
                if in_flight.get(video_id) is me:
                    del in_flight[video_id]

    def _ride_along(self, ids: list[VideoId], riders: list[VideoId]) -> None:
        """Add ``riders`` to this call's ``ids``, each in flight with it."""
        me = asyncio.current_task()
        assert me is not None
        in_flight = self.in_flight
        for video_id in riders:
            if video_id not in in_flight:
                in_flight[video_id] = me  # the task running this call
                ids.append(video_id)

    async def _stored(self, ids: Sequence[VideoId]) -> Landed:
        """Call for ``ids`` a call's worth at a time, each stored as it lands (what a failed or
        slow call does not hold up is kept); the first failure, else every entry."""
        step = MAX_IDS_PER_CALL
        outcomes = await asyncio.gather(
            *(self._stored_call(ids[i : i + step]) for i in range(0, len(ids), step))
        )
        fetched: dict[VideoId, VideoEntry] = {}
        for outcome in outcomes:
            if isinstance(outcome, Failure):
                return outcome
            fetched.update(outcome.unwrap())
        return Success(fetched)

    async def _stored_call(self, ids: Sequence[VideoId]) -> Landed:
        """Call for ``ids`` (a call's worth) and store what comes back."""
        outcome = await self._inner.fetch(ids)
        if isinstance(outcome, Failure):
            return Failure(outcome.failure())
        batch = outcome.unwrap()
        # An inner cache (memory over Redis) may answer with older entries.
        stored_at = self._clock() - (batch.cache.age_s if batch.cache is not None else 0.0)
        stats = batch.stats
        fetched = {i: VideoEntry(stats.get(i), stored_at) for i in ids}
        await self._entries.put_many(fetched)
        if self._ahead is not None:
            self._ahead.fetched(ids, stored_at)
        return Success(fetched)

    async def _claimed_elsewhere(self, ids: list[VideoId]) -> Landed:
        """The entries other workers were fetching, waited for; a call for those that did not come."""
        assert self._misses is not None
        landed = dict(await self._misses.wait(ids, self._freshness.fresh_s()))
        self._metrics.video_cache_event("waited_for_another", len(landed))
        if self._ahead is not None:
            self._ahead.learned(landed)
        lacking = [i for i in ids if i not in landed]
        if not lacking:
            return Success(landed)
        return (await self._stored(lacking)).map(lambda fetched: {**landed, **fetched})
