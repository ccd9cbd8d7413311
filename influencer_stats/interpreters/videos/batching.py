"""Cross-request batching: ids wanted by different concurrent requests share ``videos.list`` calls."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

from returns.result import Failure, Result, Success

from influencer_stats.algebras import CacheMetrics, VideoStatsSource
from influencer_stats.algebras.clients import CALLER, Caller
from influencer_stats.domain.models import (
    ShareSpent,
    UpstreamError,
    VideoBatch,
    VideoId,
    VideoStats,
)
from influencer_stats.interpreters.youtube.call_gate import current_flow


class _Call:
    """One inner fetch of at most ``max_ids`` ids: filled while open, then sent (on behalf of
    ``sender``, the client whose fetch sent it); ``done`` holds its outcome."""

    __slots__ = ("crowded", "done", "flow", "ids", "sender")

    def __init__(self, loop: asyncio.AbstractEventLoop, flow: object | None, crowded: bool) -> None:
        self.ids: list[VideoId] = []
        self.flow = flow  # the request that opened it
        self.crowded = crowded  # other requests are about: more ids may come to fill it
        self.done: asyncio.Future[Result[VideoBatch, UpstreamError]] = loop.create_future()
        self.sender: Caller | None = None


class BatchingSource:
    """``VideoStatsSource`` wrapper that collects the ids of concurrent fetches into full calls.

    Request collapsing (the Netflix lesson): the ids of concurrent fetches go
    to ``inner`` together, in fetches of at most ``max_ids`` distinct ids (one
    ``videos.list`` call each for a batched client, one quota unit whatever its
    ids). As soon as ``max_ids`` ids wait, that call leaves at once. A call not
    full leaves when ``window_s`` ends if it is at least half full, or alone (no
    other request's fetch came within ``fill_s`` before it opened, or joined it
    since) and ``busy()`` (the call gate: no free connection, or calls waiting
    for one) is false: a lone request pays only the window. Among other
    requests a call under half full waits to fill,
    up to ``fill_s`` after it opened (a cold start's misses share calls). While
    the gate is busy it fills until ``freed()`` (a slot given back: the turn the
    gate, fewest calls waiting first, would give it at the soonest), at most as
    long. So a fetch waits at most ``window_s`` alone, ``fill_s`` otherwise (and
    a cache above means hits never come here). An id already waiting or in
    flight is shared, not asked twice.

    Each waiting fetch gets exactly its ids. A failed inner fetch fails only the
    fetches that needed one of its ids. A fetch waits until its calls answer
    (the request's deadline is applied above, by the per-video cache or
    ``DeadlineSource``); a fetch that stops waiting leaves its calls to the
    others, never cancels them (the source below shares out the connections
    and bounds what waits for them). Calls saved (what the fetches would have
    cost one by one, less what they cost together) are recorded as
    ``calls_saved("batching", n)``. The cost per id is two dict operations; a
    future is made per call, not per id. ``sleep`` and ``clock`` are injected,
    so tests drive the waits without waiting.
    """

    def __init__(
        self,
        inner: VideoStatsSource,
        metrics: CacheMetrics,
        *,
        window_s: float,
        max_ids: int,
        fill_s: float = 0.0,
        busy: Callable[[], bool] | None = None,
        freed: Callable[[], Awaitable[None]] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] | None = None,
    ) -> None:
        if fill_s and fill_s < window_s:
            raise ValueError("fill_s is at least window_s, or 0 (a call leaves when the window ends)")
        self._inner = inner
        self._metrics = metrics
        self._window_s = window_s
        self._max_ids = max_ids
        self._fill_s = fill_s
        self._busy = busy or _never
        self._freed = freed
        self._sleep = sleep
        self._clock = clock or _loop_time  # the clock ``asyncio.sleep`` waits by
        self._last_at = -math.inf  # when a fetch last brought ids, and its request's flow
        self._last_flow: object | None = None
        self._open: _Call | None = None
        self._where: dict[VideoId, _Call] = {}  # ids waiting or in flight, and their call
        self._tasks: set[asyncio.Task[None]] = set()
        self._alone = 0  # calls the fetches of this batch would have made one by one
        self._sent = 0  # calls this batch made

    async def fetch(self, ids: Sequence[VideoId]) -> Result[VideoBatch, UpstreamError]:
        if not ids:
            return Success(VideoBatch({}, ()))
        where = self._where
        mine: list[tuple[VideoId, _Call]] = []
        joined: _Call | None = None
        flow = current_flow()
        for video_id in ids:
            call = where.get(video_id)
            if call is None:
                call = self._open or self._opened(flow)
                if call is not joined:  # another request's ids there already: it is crowded
                    joined = call
                    call.crowded = call.crowded or (call.flow is not flow and bool(call.ids))
                call.ids.append(video_id)
                where[video_id] = call
                if len(call.ids) >= self._max_ids:
                    self._send(call)
            mine.append((video_id, call))
        if joined is not None and self._fill_s:
            self._last_at, self._last_flow = self._clock(), flow
        self._alone += -(-len(ids) // self._max_ids)
        await asyncio.wait({call.done for _, call in mine})  # never cancels them: others may wait too
        stats: dict[VideoId, VideoStats] = {}
        missing: list[VideoId] = []
        for video_id, call in mine:
            match call.done.result():
                case Success(batch):
                    found = batch.stats.get(video_id)
                    if found is None:
                        missing.append(video_id)
                    else:
                        stats[video_id] = found
                case Failure(ShareSpent() as spent):
                    if call.sender == CALLER.get():
                        return Failure(spent)  # this client's own share: asking again is refused again
                    # The client whose request sent the shared call is past its share: this
                    # fetch asks for its own ids alone, on its own client's share (once).
                    return await self._inner.fetch(ids)
                case Failure(error):
                    return Failure(error)
        return Success(VideoBatch(stats, tuple(missing)))

    def _opened(self, flow: object | None) -> _Call:
        # Crowded: another request brought ids a moment ago (one request's calls of 50 are not).
        crowded = bool(self._fill_s) and (
            self._last_flow is not flow and self._clock() - self._last_at < self._fill_s
        )
        call = self._open = _Call(asyncio.get_running_loop(), flow, crowded)
        self._spawn(self._after_window(call), "batch-window")
        return call

    async def _after_window(self, call: _Call) -> None:
        await self._sleep(self._window_s)
        if call is not self._open:
            return  # it filled up
        # Only a call under half full waits: at best it halves its cost per id, while each
        # waiting request pays the wait (perf/RESULTS.md, "Calls filled toward 50 ids": the lab's
        # p99 5 ms with no wait, 39 ms holding every call, 17 ms holding those under half).
        if self._fill_s and len(call.ids) < self._max_ids // 2 and (call.crowded or self._busy()):
            rest = self._fill_s - self._window_s  # more ids may come: fill it
            if self._freed is not None and self._busy():
                # Every connection taken: it fills until a slot is given back, the turn the gate
                # (fewest calls waiting first) would give it at the soonest.
                await _first(self._sleep(rest), self._freed())
            else:
                await self._sleep(rest)
            if call is not self._open:
                return
        self._send(call)

    def _send(self, call: _Call) -> None:
        # The call runs in the context of the fetch sending it (the window's task has the
        # opener's), so its unit is taken from that client's share.
        call.sender = CALLER.get()
        self._sent += 1
        if call is self._open:
            self._open = None
            if self._alone > self._sent:  # the batch is out: record what it saved
                self._metrics.calls_saved("batching", self._alone - self._sent)
            self._alone = self._sent = 0
        self._spawn(self._call(call), f"batch:{len(call.ids)}")

    def _spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _call(self, call: _Call) -> None:
        try:
            outcome = await self._inner.fetch(call.ids)
        except BaseException as exc:  # cancelled at shutdown, or a bug below: nobody waits forever
            if isinstance(exc, Exception):
                call.done.set_exception(exc)
            else:
                call.done.cancel()
            raise
        else:
            call.done.set_result(outcome)
        finally:
            where = self._where
            for video_id in call.ids:
                if where.get(video_id) is call:
                    del where[video_id]


def _never() -> bool:
    return False


def _loop_time() -> float:
    return asyncio.get_running_loop().time()


async def _first(*waits: Awaitable[None]) -> None:
    """Until the first of ``waits`` is done; the others are cancelled."""
    tasks = [asyncio.ensure_future(wait) for wait in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
