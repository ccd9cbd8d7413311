"""Stale videos refreshed in the background, together: queued to ride a call, or leaving once enough wait."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from influencer_stats.algebras.video_cache import StaleQueue
from influencer_stats.domain.models import VideoId
from influencer_stats.interpreters.video_cache.freshness import Freshness
from influencer_stats.interpreters.video_cache.refresh_ahead import RefreshAhead
from influencer_stats.interpreters.video_cache.video_calls import VideoCalls


class StaleRefresher:
    """Refreshes the videos a per-video cache served stale, without a call for each stale fetch.

    ``refresh`` queues them in ``stale`` (nobody waits for them: a call for
    each stale fetch would be a unit for a few ids). From there they ride the
    next call with room (``RefreshAhead.riders``), or leave together in a call
    of their own (``calls``) once a call's worth waits or ``wait_s`` has
    passed since they were queued. What was refreshed meanwhile, or is in
    flight, is not called for again (``RefreshAhead.still_stale``).
    Concurrent fetches' stale videos go to the queue in one operation.
    ``sleep`` is injected, so tests end the wait by hand.
    """

    def __init__(
        self,
        stale: StaleQueue,
        calls: VideoCalls,
        ahead: RefreshAhead,
        clock: Callable[[], float],
        freshness: Freshness,
        *,
        wait_s: float,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._stale = stale
        self._calls = calls
        self._ahead = ahead
        self._clock = clock
        self._freshness = freshness
        self._wait_s = wait_s
        self._sleep = sleep
        self._pushing: dict[VideoId, None] = {}  # stale videos on their way to the queue
        self._pusher: asyncio.Task[None] | None = None
        self._timer: asyncio.Task[None] | None = None

    def refresh(self, ids: Sequence[VideoId]) -> None:
        """Queue ``ids`` (those not in flight) for a refresh, in the background."""
        in_flight = self._calls.in_flight
        self._pushing.update(dict.fromkeys(i for i in ids if i not in in_flight))
        if self._pushing and self._pusher is None:
            self._pusher = asyncio.create_task(self._push(), name="video-cache:queue-stale")

    async def _push(self) -> None:
        """Queue what concurrent fetches found stale, one queue operation for all of them."""
        try:
            while self._pushing:
                ids, self._pushing = list(self._pushing), {}
                full = await self._stale.push(ids, self._clock(), self._freshness.fresh_s())
                if full:
                    self._call(full)
                if self._timer is None:
                    self._timer = asyncio.create_task(self._after_wait(), name="video-cache:stale")
        finally:
            self._pusher = None

    async def _after_wait(self) -> None:
        """When the wait ends, refresh what was queued before it began; again while any are left."""
        try:
            left = True
            while left:
                cutoff = self._clock()
                await self._sleep(self._wait_s)
                taken, left = await self._stale.take_due(cutoff, self._clock(), self._freshness.fresh_s())
                if taken:
                    self._call(taken)
        finally:
            self._timer = None

    def _call(self, taken: Sequence[VideoId]) -> None:
        calls = self._calls
        calls.load(self._ahead.still_stale(taken, calls.in_flight), queued=True)
