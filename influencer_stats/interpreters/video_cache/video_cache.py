"""A per-video cache: every collection that lists a video shares its counters."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence

from returns.result import Failure, Result, Success

from influencer_stats.algebras import CacheMetrics, EventLog
from influencer_stats.algebras.video_cache import VideoEntries
from influencer_stats.domain.models import (
    CacheInfo,
    QuotaExhausted,
    UpstreamError,
    VideoBatch,
    VideoEntry,
    VideoId,
)
from influencer_stats.interpreters.video_cache.freshness import Freshness
from influencer_stats.interpreters.video_cache.refresh_ahead import RefreshAhead
from influencer_stats.interpreters.video_cache.stale_refresher import StaleRefresher
from influencer_stats.interpreters.video_cache.video_calls import VideoCalls
from influencer_stats.interpreters.video_cache.video_entries import batch_of, oldest_info
from influencer_stats.interpreters.videos.deadline import timed_out
from influencer_stats.interpreters.youtube.call_gate import own_flow


class CachedVideoSource:
    """``VideoStatsSource`` wrapper that caches each video's counters, missing ones included.

    Its parts, each built by the composition root and passed in:

    - ``entries``: where entries live (this process, or Redis for every worker).
    - ``freshness``: how long an entry is served, fresh or stale (``Freshness``).
    - ``calls``: the calls for the ids it lacks (``VideoCalls``: one in flight
      per video, a call's worth at a time, each stored as it lands, kept after
      the caller has gone; with workers sharing entries, misses claimed first).
    - ``ahead`` and ``refresher``, both or neither: refresh-ahead
      (``RefreshAhead``: calls with room are topped up with videos that are
      due) and the stale queue (``StaleRefresher``: stale videos wait to ride
      a call). Without them (a client of one id per call) each refresh is a
      call of its own, started at once.

    A fetch serves fresh entries, and stale-while-revalidate ones while a
    background refresh runs; it asks ``calls`` only for the ids it lacks, and
    waits at most ``deadline_s`` (the request's deadline: no layer below cuts
    a call short). Failures are never cached. When the calls fail or the
    deadline passes, entries still within ``freshness``'s stale-if-error
    window are served, and every entry held, however old, when the day's
    quota budget is spent; a fetch that still lacks an id fails. The answer's
    ``cache`` is the oldest served entry's (``None``: all fetched now). Every
    video served is a video-cache event (hit, stale, miss, stale_if_error,
    quota_exhausted; the calls add refreshed_ahead, waited_for_another); a
    fetch answered without calling is a call saved by ``video_cache``.

    The clock is injected (wall time when ``entries`` are shared by hosts).
    """

    def __init__(
        self,
        entries: VideoEntries,
        calls: VideoCalls,
        freshness: Freshness,
        clock: Callable[[], float],
        log: EventLog,
        metrics: CacheMetrics,
        *,
        deadline_s: float,
        ahead: RefreshAhead | None = None,
        refresher: StaleRefresher | None = None,
        refused: Callable[[], UpstreamError | None] = lambda: None,
    ) -> None:
        if (ahead is None) != (refresher is None):
            raise ValueError("refresh-ahead and the stale queue go together: both or neither")
        self._entries = entries
        self._calls = calls
        self._freshness = freshness
        self._clock = clock
        self._log = log
        self._metrics = metrics
        self._deadline_s = deadline_s
        self._ahead = ahead
        self._refresher = refresher
        self._refused = refused

    async def fetch(self, ids: Sequence[VideoId]) -> Result[VideoBatch, UpstreamError]:
        if not ids:
            return Success(VideoBatch({}, ()))
        held = dict(await self._entries.get_many(ids))
        if self._ahead is not None:
            self._ahead.asked(held)
        now = self._clock()
        fresh_s, stale_s = self._freshness.windows()
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
            if self._refresher is None:
                self._calls.load(revalidate)  # at once, in the background
            else:
                self._refresher.refresh(revalidate)  # queued, in the background
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
        refused = self._refused()
        if refused is not None and any(i not in self._calls.in_flight for i in due):
            # Known refused: no call, claim, batch or gate for it (perf/RESULTS.md, "Fair shares").
            return self._served_from_held(refused, ids, due, held, info)
        with own_flow():  # this request's calls: one flow at the call gate
            calls = self._calls.load(due)
        done, pending = await asyncio.wait(calls, timeout=self._deadline_s)  # never cancels them
        error: UpstreamError | None = None
        fetched: set[VideoId] = set()
        for call in done:
            match call.result():
                case Success(landed):
                    held.update(landed)
                    fetched.update(landed)
                case Failure(failed):
                    error = error or failed
        if pending and error is None:
            error = timed_out(self._deadline_s)
        if error is not None:
            return self._served_from_held(error, ids, [i for i in due if i not in fetched], held, info)
        return Success(batch_of(ids, held, info))

    def _served_from_held(
        self,
        error: UpstreamError,
        ids: Sequence[VideoId],
        lacking: Sequence[VideoId],
        held: dict[VideoId, VideoEntry],
        served: CacheInfo | None,
    ) -> Result[VideoBatch, UpstreamError]:
        """The answer from held entries in place of a failed call, or the failure if one is lacking."""
        exhausted = isinstance(error, QuotaExhausted)
        infos = self._freshness.served_instead(lacking, held, self._clock(), exhausted=exhausted)
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
