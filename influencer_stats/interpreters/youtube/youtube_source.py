"""``VideoStatsSource`` over ``videos.list``: fan-out, batching, shares of the connections, retries."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from returns.result import Failure, Result, Success

from influencer_stats.algebras import EventLog, UpstreamMetrics
from influencer_stats.algebras.youtube import VideosListCall
from influencer_stats.domain.models import (
    StatsByVideo,
    UpstreamBusy,
    UpstreamError,
    UpstreamMisconfigured,
    UpstreamTimeout,
    VideoBatch,
    VideoId,
)
from influencer_stats.interpreters.youtube.call_gate import CallGate, current_flow
from influencer_stats.interpreters.youtube.youtube_api import MAX_IDS_PER_CALL, is_transient

T = TypeVar("T")


async def _NOTHING() -> Result[VideoBatch, UpstreamError]:  # noqa: N802 - an empty request's answer
    return Success(VideoBatch({}, ()))


def _found(_: Sequence[VideoId], found: StatsByVideo) -> StatsByVideo:
    return found


def _NEVER() -> bool:  # noqa: N802 - a constant: the fetch never gives up on this call
    return False


@dataclass(frozen=True, slots=True)
class UpstreamPolicy:
    """How to call: ids per call, the timeout of each attempt, retries.

    ``ids_per_call=1`` is the original's one request per video;
    ``MAX_IDS_PER_CALL`` (50) is batching. ``call_timeout_s`` bounds each
    attempt, from when it has a connection.
    """

    ids_per_call: int
    call_timeout_s: float
    retries: int
    backoff_base_s: float = 0.05
    backoff_cap_s: float = 0.5

    def __post_init__(self) -> None:
        if not 1 <= self.ids_per_call <= MAX_IDS_PER_CALL:
            raise ValueError(f"ids_per_call must be 1-{MAX_IDS_PER_CALL}")
        if self.retries < 0:
            raise ValueError("retries must be >= 0")


class YouTubeVideoStatsSource:
    """``VideoStatsSource`` that splits a request into ``videos.list`` calls.

    Calls of ``policy.ids_per_call`` ids run concurrently. Each attempt first
    takes a slot of ``gate`` (the process's connections, shared between
    requests: ``CallGate``), then calls, within ``policy.call_timeout_s``; so
    the quota governor inside ``call`` spends a unit only for a call about to
    be sent, and no attempt's time is spent queueing. A full gate fails the
    attempt with ``UpstreamBusy`` at once. A transient failure (5xx, 429,
    connection error) is retried with capped exponential backoff and full
    jitter, at most ``policy.retries`` times; quota, misconfiguration, invalid
    data and timeouts are not. The first failure stops calls not yet started
    and fails the fetch. Cancelling a fetch cancels its calls. The clock,
    sleep and random source are injected so tests of time need no sleeping.

    It keeps no request deadline and consults no breaker: the layers around it
    do (``DeadlineSource`` or the per-video cache, ``CircuitBreakerSource``);
    the flow of the gate its calls take turns as (``call_gate.own_flow``) is
    the one the caller set.
    """

    def __init__(
        self,
        call: VideosListCall,
        policy: UpstreamPolicy,
        gate: CallGate,
        log: EventLog,
        metrics: UpstreamMetrics,
        *,
        clock: Callable[[], float],
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self._call = call
        self._policy = policy
        self._gate = gate
        self._log = log
        self._metrics = metrics
        self._clock = clock
        self._sleep = sleep
        self._rng = rng
        self._misconfiguration_logged = False

    def fetch(self, ids: Sequence[VideoId]) -> Coroutine[Any, Any, Result[VideoBatch, UpstreamError]]:
        # A plain method handing back the coroutine of the path it chose: a fetch of one call is
        # that call's attempts, with no coroutine of its own around them.
        if not ids:
            return _NOTHING()
        flow = current_flow()
        if len(ids) <= self._policy.ids_per_call:  # the common case: one call, no task
            return self._attempts(ids, flow, done=self._batch)
        return self._fetch_many(ids, flow)

    async def _fetch_many(
        self, ids: Sequence[VideoId], flow: object | None
    ) -> Result[VideoBatch, UpstreamError]:
        step = self._policy.ids_per_call
        chunks = [ids[i : i + step] for i in range(0, len(ids), step)]
        found: StatsByVideo = {}
        for result in await self._fan_out(chunks, flow):
            if isinstance(result, Failure):
                return self._failed(result.failure())
            found.update(result.unwrap())
        return Success(self._batch(ids, found))

    @staticmethod
    def _batch(ids: Sequence[VideoId], found: StatsByVideo) -> VideoBatch:
        """The batch of ``ids`` (distinct) from what the calls found: the ids not found missing,
        in request order."""
        missing = [video_id for video_id in ids if video_id not in found]
        if len(found) != len(ids) - len(missing):  # the answer named ids not asked for: left out
            found = {video_id: found[video_id] for video_id in ids if video_id in found}
        return VideoBatch(found, tuple(missing))

    async def _fan_out(
        self, chunks: list[Sequence[VideoId]], flow: object | None
    ) -> list[Result[StatsByVideo, UpstreamError]]:
        failed = False

        async def one(chunk: Sequence[VideoId]) -> Result[StatsByVideo, UpstreamError]:
            nonlocal failed
            if failed:
                return Success({})  # the fetch already failed; spare the quota
            result = await self._call_with_retries(chunk, flow, lambda: failed)
            if isinstance(result, Failure):
                failed = True
            return result

        return await asyncio.gather(*(one(c) for c in chunks))

    def _call_with_retries(
        self, ids: Sequence[VideoId], flow: object | None, given_up: Callable[[], bool] = _NEVER
    ) -> Coroutine[Any, Any, Result[StatsByVideo, UpstreamError]]:
        """The attempts of one call of ``ids``: what it found, or why it failed."""
        return self._attempts(ids, flow, given_up, done=_found)

    async def _attempts(
        self,
        ids: Sequence[VideoId],
        flow: object | None,
        given_up: Callable[[], bool] = _NEVER,
        *,
        done: Callable[[Sequence[VideoId], StatsByVideo], T],
    ) -> Result[T, UpstreamError]:
        """Attempts until one counts, each with a slot of the gate and within the call timeout
        (``given_up``: the fetch failed meanwhile, so a call that got its slot late is not made);
        what a successful call found is handed back as ``done(ids, found)``, a failure as it is."""
        policy, gate = self._policy, self._gate
        attempt = 0
        while True:
            # The gate's coroutine only when the pool is contested (perf/RESULTS.md, "The
            # `guarded` reference", item 1).
            if not gate.try_enter(flow) and not await gate.enter(flow):
                return self._failed(
                    UpstreamBusy(f"{gate.waiting:,} YouTube calls are waiting for a connection")
                )
            try:
                if given_up():
                    return Success(done(ids, {}))
                started = self._clock()
                try:
                    async with asyncio.timeout(policy.call_timeout_s):
                        result = await self._call(ids)
                except TimeoutError:
                    self._metrics.upstream_call("UpstreamTimeout", self._clock() - started)
                    return self._failed(
                        UpstreamTimeout(f"a videos.list call took over {policy.call_timeout_s:g}s")
                    )
            finally:
                gate.leave(flow)
            if isinstance(result, Success):
                self._metrics.upstream_call("ok", self._clock() - started)
                return Success(done(ids, result.unwrap()))
            error = result.failure()
            self._metrics.upstream_call(type(error).__name__, self._clock() - started)
            if attempt >= policy.retries or not is_transient(error):
                return self._failed(error)
            delay = self._rng() * min(policy.backoff_cap_s, policy.backoff_base_s * 2**attempt)
            attempt += 1
            self._log.debug("youtube.retry", attempt=attempt, delay_s=round(delay, 4), error=error.detail)
            await self._sleep(delay)

    def _failed(self, error: UpstreamError) -> Failure[UpstreamError]:
        if isinstance(error, UpstreamMisconfigured) and not self._misconfiguration_logged:
            self._misconfiguration_logged = True
            self._log.error(
                "youtube.misconfigured",
                detail=error.detail,
                hint="check YOUTUBE_API_KEY and YOUTUBE_API_URL; logged once",
            )
        return Failure(error)
