"""A per-video cache: every collection that lists a video shares its counters."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Sequence

from returns.result import Failure, Result, Success

from influencer_stats.algebras import EventLog, Metrics, VideoStatsSource
from influencer_stats.algebras.video_cache import MissClaims, StaleQueue, VideoEntries
from influencer_stats.domain.models import (
    CacheInfo,
    QuotaExhausted,
    UpstreamError,
    VideoBatch,
    VideoEntry,
    VideoId,
)
from influencer_stats.interpreters.stats.cache import CachePolicy
from influencer_stats.interpreters.videos.asked_since import AskedSince
from influencer_stats.interpreters.videos.call_gate import own_flow
from influencer_stats.interpreters.videos.deadline import timed_out
from influencer_stats.interpreters.videos.miss_claims import Landings
from influencer_stats.interpreters.videos.stale_queue import MemoryStaleQueue
from influencer_stats.interpreters.videos.video_entries import batch_of, oldest_info, served_instead
from influencer_stats.interpreters.videos.youtube_api import MAX_IDS_PER_CALL


class CachedVideoSource:
    """``VideoStatsSource`` wrapper that caches each video's counters, missing ones included.

    - A fetch asks ``inner`` only for the ids it lacks (fresh or stale-while-
      revalidate entries are served), a call's worth (50 ids) at a time, each
      stored as soon as it lands; it waits at most ``deadline_s`` (the
      request's deadline: no layer below cuts a call short). Calls go on after
      the caller stops waiting or goes away, and fill the cache (they are paid
      for); concurrent fetches of an id share one call (single-flight per id).
    - Fresh for ``policy.ttl_s`` times ``stretch()`` (1 unless the quota
      governor says spending runs ahead of the day); then, for
      ``stale_while_revalidate_s``, served stale while one background refresh runs
      (with refresh-ahead, stale videos wait up to ``refresh_wait_s`` to ride
      the next call, or leave together once a call's worth is waiting).
    - Failures are never cached. When the inner source fails or the deadline
      passes, entries younger than ``ttl_s + stale_if_error_s`` are served
      (``stale-if-error``); when it fails because the day's quota budget is
      spent, every entry held is served (``quota-exhausted``), however old. A
      fetch that still lacks an id fails.
    - The answer's ``cache`` is the oldest served entry's (``None``: all fetched now).
    - Entries live in ``entries`` (this process, or Redis for every worker).
    - With ``landings`` (workers sharing entries), a miss's call first claims its ids
      (``landings.claims``); the ones another worker is calling for are waited for,
      and called for here only if their entries do not come.
    - Refresh-ahead: a call of fewer than ``fill_to`` ids (the inner source's
      ids per call; 0 = off) is topped up with videos that will soon be due
      (``AskedSince``; with ``shared`` entries, others' fetches count too): a
      call costs one unit whatever its ids, so popular videos ride for free.
    - Every video served is a video-cache event (hit, stale, miss,
      stale_if_error, quota_exhausted; refreshed_ahead, waited_for_another); a
      fetch answered without calling is a call saved by ``video_cache``.

    The clock is injected (wall time when ``entries`` are shared by hosts).
    """

    def __init__(
        self,
        inner: VideoStatsSource,
        entries: VideoEntries,
        clock: Callable[[], float],
        policy: CachePolicy,
        log: EventLog,
        metrics: Metrics,
        stretch: Callable[[], float],
        *,
        deadline_s: float,
        fill_to: int,
        shared: bool,
        stale: StaleQueue | None = None,
        landings: Landings | None = None,
        refresh_wait_s: float = 1.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._inner = inner
        self._entries = entries
        self._clock = clock
        self._policy = policy
        self._log = log
        self._metrics = metrics
        self._stretch = stretch
        self._deadline_s = deadline_s
        self._fill_to = fill_to
        self._learn = bool(fill_to) and shared  # entries others stored count for refresh-ahead too
        self._refresh_wait_s = refresh_wait_s
        self._sleep = sleep
        self._stale = stale if stale is not None else MemoryStaleQueue(fill_to)
        self._landings = landings
        self._claims: MissClaims | None = landings.claims if landings is not None else None
        self._pushing: dict[VideoId, None] = {}  # stale videos on their way to the queue
        self._pusher: asyncio.Task[None] | None = None
        self._stale_timer: asyncio.Task[None] | None = None
        self._flights: dict[VideoId, asyncio.Task[Result[dict[VideoId, VideoEntry], UpstreamError]]] = {}
        self._since = AskedSince(policy.max_entries)  # what to refresh ahead

    async def fetch(self, ids: Sequence[VideoId]) -> Result[VideoBatch, UpstreamError]:
        if not ids:
            return Success(VideoBatch({}, ()))
        held = dict(await self._entries.get_many(ids))
        if self._fill_to:
            if self._learn:
                self._since.learned(held)
            self._since.asked(held)
        policy = self._policy
        now, fresh_s = self._clock(), policy.ttl_s * self._stretch()
        stale_s = fresh_s + policy.stale_while_revalidate_s
        oldest = -math.inf  # the age of the oldest entry served
        due: list[VideoId] = []
        revalidate: list[VideoId] = []
        for video_id in ids:  # the hot loop: no object per id
            entry = held.get(video_id)
            if entry is None:
                due.append(video_id)
                continue
            age = now - entry.stored_at
            if age >= fresh_s:
                if age > stale_s:
                    due.append(video_id)
                    continue
                revalidate.append(video_id)
            if age > oldest:
                oldest = age
        metrics = self._metrics
        served = len(ids) - len(due)
        if revalidate:
            metrics.video_cache_event("stale", len(revalidate))
            self._refresh(revalidate)  # in the background
        if served > len(revalidate):
            metrics.video_cache_event("hit", served - len(revalidate))
        info = None
        if served:
            age = max(0.0, oldest)  # never younger than 0 s (another host's clock may run ahead)
            info = CacheInfo(True, age, fresh_s - age, "revalidating" if revalidate else None)
        if not due:
            metrics.calls_saved("video_cache", 1)
            return Success(batch_of(ids, held, info))
        metrics.video_cache_event("miss", len(due))
        with own_flow():  # this request's calls: one flow at the call gate
            tasks = self._load(due)
        done, pending = await asyncio.wait(tasks, timeout=self._deadline_s)  # never cancels them
        error: UpstreamError | None = None
        fetched: set[VideoId] = set()
        for task in done:
            match task.result():
                case Success(landed):
                    held.update(landed)
                    fetched.update(landed)
                case Failure(failed):
                    error = error or failed
        if pending and error is None:
            error = timed_out(self._deadline_s)
        if error is not None:
            return self._instead_of(error, ids, [i for i in due if i not in fetched], held, info)
        return Success(batch_of(ids, held, info))

    def _refresh(self, ids: Sequence[VideoId]) -> None:
        """Refresh stale entries in the background: at once without refresh-ahead; else they are
        queued (``stale``), to ride the next call with room, or to leave together once a call's
        worth waits or ``refresh_wait_s`` has passed (nobody waits for them: a call for each
        stale fetch would be a unit for a few ids)."""
        if not self._fill_to:
            self._load(ids)
            return
        flights = self._flights
        self._pushing.update(dict.fromkeys(i for i in ids if i not in flights))
        if self._pushing and self._pusher is None:
            self._pusher = asyncio.create_task(self._push(), name="video-cache:queue-stale")

    async def _push(self) -> None:
        """Queue what concurrent fetches found stale, one queue operation for all of them."""
        try:
            while self._pushing:
                ids, self._pushing = list(self._pushing), {}
                full = await self._stale.push(ids, self._clock(), self._fresh_s())
                if full:
                    self._load(self._still_stale(full), take_stale=False)
                if self._stale_timer is None:
                    self._stale_timer = asyncio.create_task(self._stale_later(), name="video-cache:stale")
        finally:
            self._pusher = None

    async def _stale_later(self) -> None:
        """When the wait ends, refresh what was queued before it began; again while any are left."""
        try:
            left = True
            while left:
                cutoff = self._clock()
                await self._sleep(self._refresh_wait_s)
                taken, left = await self._stale.take_due(cutoff, self._clock(), self._fresh_s())
                if taken:
                    self._load(self._still_stale(taken), take_stale=False)
        finally:
            self._stale_timer = None

    def _fresh_s(self) -> float:
        return self._policy.ttl_s * self._stretch()

    def _still_stale(self, taken: Sequence[VideoId]) -> list[VideoId]:
        """Queued stale videos less those refreshed meanwhile (here, or by another worker as far
        as this one has read) and those in flight."""
        fresh_s = self._fresh_s()
        now, flights, since = self._clock(), self._flights, self._since
        return [i for i in taken if i not in flights and now - since.fetched_at(i) >= fresh_s]

    def _load(
        self, ids: Sequence[VideoId], *, take_stale: bool = True
    ) -> set[asyncio.Task[Result[dict[VideoId, VideoEntry], UpstreamError]]]:
        """The calls that bring ``ids``: those in flight, plus one started now for the others
        (topped up with queued stale videos unless ``take_stale`` is false, then refresh-ahead)."""
        flights = self._flights
        tasks = {flights[i] for i in ids if i in flights}
        lacking = [i for i in ids if i not in flights]
        if lacking:
            task = asyncio.create_task(self._call(lacking, take_stale), name=f"video-cache:{len(lacking)}")
            for video_id in lacking:
                flights[video_id] = task
            tasks.add(task)
        return tasks

    async def _top_up(self, ids: list[VideoId], take_stale: bool) -> None:
        """Fill the last call of ``ids`` to ``fill_to`` ids (the client splits them in calls of
        that many): queued stale videos first (they are due), then videos due soon
        (refresh-ahead); each added id is in flight with this call."""
        room = -len(ids) % self._fill_to  # the room left in the last call of the ids
        added: list[VideoId] = []
        if take_stale and room:
            queued = await self._stale.take(room, self._clock(), self._fresh_s())
            known = set(ids)
            added += [i for i in self._still_stale(queued) if i not in known]
        if len(added) < room:
            if self._learn:  # what other workers refreshed meanwhile is not due here either
                self._since.learned(await self._entries.get_many(self._since.oldest_asked(3 * room)))
            # Videos due soon, not in flight: each would otherwise cost a call of its own later.
            taken = {*ids, *added} | self._flights.keys()
            ahead = self._since.due_soon(room - len(added), taken, self._clock(), self._fresh_s() / 4)
            if ahead:
                self._metrics.video_cache_event("refreshed_ahead", len(ahead))
            added += ahead
        me = asyncio.current_task()
        assert me is not None
        flights = self._flights
        for video_id in added:
            if video_id not in flights:
                flights[video_id] = me  # the task running this call
                ids.append(video_id)

    async def _call(
        self, ids: list[VideoId], take_stale: bool
    ) -> Result[dict[VideoId, VideoEntry], UpstreamError]:
        theirs: list[VideoId] = []  # misses another worker is calling for (see MissClaims)
        claims = self._claims if take_stale else None
        try:
            if claims is not None and (theirs := await claims.claim(ids, self._clock(), self._fresh_s())):
                skip = set(theirs)
                ids[:] = [i for i in ids if i not in skip]
            claimed = list(ids) if claims is not None else []
            fetched: dict[VideoId, VideoEntry] = {}
            if ids:
                try:
                    if self._fill_to:
                        await self._top_up(ids, take_stale)
                    outcome = await self._stored(ids)
                finally:
                    if claims is not None and claimed:
                        await claims.release(claimed)
                if isinstance(outcome, Failure):
                    return outcome
                fetched = outcome.unwrap()
            if theirs:
                return (await self._landed(theirs)).map(lambda landed: {**fetched, **landed})
            return Success(fetched)
        finally:
            me = asyncio.current_task()
            for video_id in (*ids, *theirs):
                if self._flights.get(video_id) is me:
                    del self._flights[video_id]

    async def _stored(self, ids: Sequence[VideoId]) -> Result[dict[VideoId, VideoEntry], UpstreamError]:
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

    async def _stored_call(self, ids: Sequence[VideoId]) -> Result[dict[VideoId, VideoEntry], UpstreamError]:
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
        if self._fill_to:
            self._since.fetched(ids, stored_at)
        return Success(fetched)

    async def _landed(self, theirs: list[VideoId]) -> Result[dict[VideoId, VideoEntry], UpstreamError]:
        """The entries other workers were fetching, waited for; a call for those that did not come."""
        assert self._landings is not None
        landed = dict(await self._landings.wait(theirs, self._fresh_s()))
        self._metrics.video_cache_event("waited_for_another", len(landed))
        if self._learn:
            self._since.learned(landed)
        lacking = [i for i in theirs if i not in landed]
        if not lacking:
            return Success(landed)
        return (await self._stored(lacking)).map(lambda fetched: {**landed, **fetched})

    def _instead_of(
        self,
        error: UpstreamError,
        ids: Sequence[VideoId],
        lacking: Sequence[VideoId],
        held: dict[VideoId, VideoEntry],
        served: CacheInfo | None,
    ) -> Result[VideoBatch, UpstreamError]:
        """The answer from held entries in place of a failed call, or the failure if one is lacking."""
        exhausted = isinstance(error, QuotaExhausted)
        infos = served_instead(lacking, held, self._policy, self._clock(), exhausted=exhausted)
        if infos is None:
            return Failure(error)
        kind = "quota_exhausted" if exhausted else "stale_if_error"
        self._metrics.video_cache_event(kind, len(lacking))
        if exhausted:
            self._metrics.quota_stale_answer()
            self._log.debug("videos.served_stale", reason=kind, videos=len(lacking))
        else:
            self._log.warning("videos.served_stale", reason=kind, videos=len(lacking), error=error.detail)
        return Success(batch_of(ids, held, oldest_info(infos if served is None else [served, *infos])))
