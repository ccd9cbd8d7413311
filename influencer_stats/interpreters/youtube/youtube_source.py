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
from influencer_stats.interpreters.videos.circuit_breaker import CircuitBreaker
from influencer_stats.interpreters.videos.deadline import timed_out
from influencer_stats.interpreters.youtube.call_gate import CallGate, Flow, current_flow
from influencer_stats.interpreters.youtube.youtube_api import MAX_IDS_PER_CALL, is_transient

T = TypeVar("T")


async def _NOTHING() -> Result[VideoBatch, UpstreamError]:  # noqa: N802 - an empty request's answer
    return Success(VideoBatch({}, ()))


async def _at_once(answer: Failure[UpstreamError]) -> Result[VideoBatch, UpstreamError]:
    return answer


def _found(_: Sequence[VideoId], found: StatsByVideo) -> StatsByVideo:
    return found


async def _within(wait: Awaitable[T], until: float | None) -> T:
    """``wait``, cut by ``until`` (loop time; ``TimeoutError``) when there is one."""
    if until is None:
        return await wait
    async with asyncio.timeout_at(until):
        return await wait


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

    Two duties of the layers above it can be handed to it, chosen at build
    time, so that a request's fetch is one coroutine (``keeping``):

    - ``breaker``: the ``CircuitBreaker`` consulted before each fetch and told
      how it ended, as ``CircuitBreakerSource`` around it would.
    - ``deadline_s``: the request's deadline, as ``DeadlineSource`` around it
      would keep it: each fetch is a flow of the gate of its own, the deadline
      is kept in every wait (the wait for a connection, each call's timer set
      to whichever of the call timeout and the deadline ends first, the
      backoff, the fan-out), and a fetch it cuts fails with the same
      ``UpstreamTimeout``, which the breaker counts neither way. Without it,
      the caller bounds its wait (the per-video cache, or ``DeadlineSource``)
      and its flow (``call_gate.own_flow``) is the fetch's.
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
        breaker: CircuitBreaker | None = None,
        deadline_s: float | None = None,
    ) -> None:
        self._call = call
        self._policy = policy
        self._gate = gate
        self._log = log
        self._metrics = metrics
        self._clock = clock
        self._sleep = sleep
        self._rng = rng
        self.breaker = breaker
        self.deadline_s = deadline_s
        self._late = None if deadline_s is None else Failure(timed_out(deadline_s))
        self._misconfiguration_logged = False

    def keeping(
        self, *, breaker: CircuitBreaker | None = None, deadline_s: float | None = None
    ) -> YouTubeVideoStatsSource:
        """The same source that also consults ``breaker`` / keeps ``deadline_s`` (what it had already, kept)."""
        return YouTubeVideoStatsSource(
            self._call,
            self._policy,
            self._gate,
            self._log,
            self._metrics,
            clock=self._clock,
            sleep=self._sleep,
            rng=self._rng,
            breaker=breaker or self.breaker,
            deadline_s=self.deadline_s if deadline_s is None else deadline_s,
        )

    def fetch(self, ids: Sequence[VideoId]) -> Coroutine[Any, Any, Result[VideoBatch, UpstreamError]]:
        # A plain method handing back the coroutine of the path it chose, the breaker and the
        # deadline kept in it: one coroutine frame per fetch for every suspension of the call to
        # resume (perf/RESULTS.md, "The uncached path, one coroutine": 6 frames to aiohttp, were 8).
        if not ids:
            return _NOTHING()  # nothing asked of YouTube: nothing for the breaker to judge
        breaker, probe = self.breaker, False
        if breaker is not None and breaker.state != "closed":
            refused = breaker.admit()
            if refused is not None:
                return _at_once(refused)
            probe = True
        if self.deadline_s is None:
            flow, until = current_flow(), None
        else:  # a flow of its own, passed down rather than set in a ContextVar
            flow, until = Flow(), asyncio.get_running_loop().time() + self.deadline_s
        if len(ids) <= self._policy.ids_per_call:  # the common case: one call, no task
            return self._attempts(ids, flow, done=self._batch, until=until, probe=probe)
        return self._fetch_many(ids, flow, until, probe)

    async def _fetch_many(
        self, ids: Sequence[VideoId], flow: Flow | None, until: float | None, probe: bool
    ) -> Result[VideoBatch, UpstreamError]:
        step = self._policy.ids_per_call
        chunks = [ids[i : i + step] for i in range(0, len(ids), step)]
        outcome: Result[VideoBatch, UpstreamError] | None = None
        try:
            try:
                async with asyncio.timeout_at(until):  # no timer when until is None
                    results = await self._fan_out(chunks, flow)
            except TimeoutError:
                if self._late is None or until is None:
                    raise
                return self._late  # the request's deadline: the breaker counts it neither way
            found: StatsByVideo = {}
            for result in results:
                if isinstance(result, Failure):
                    outcome = self._failed(result.failure())
                    return outcome
                found.update(result.unwrap())
            outcome = Success(self._batch(ids, found))
            return outcome
        finally:
            if self.breaker is not None:
                self.breaker.settle(outcome, probe)

    @staticmethod
    def _batch(ids: Sequence[VideoId], found: StatsByVideo) -> VideoBatch:
        """The batch of ``ids`` (distinct) from what the calls found: the ids not found missing,
        in request order."""
        missing = [video_id for video_id in ids if video_id not in found]
        if len(found) != len(ids) - len(missing):  # the answer named ids not asked for: left out
            found = {video_id: found[video_id] for video_id in ids if video_id in found}
        return VideoBatch(found, tuple(missing))

    async def _fan_out(
        self, chunks: list[Sequence[VideoId]], flow: Flow | None
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
        return self._attempts(ids, flow, given_up, done=_found, whole=False)

    async def _attempts(
        self,
        ids: Sequence[VideoId],
        flow: object | None,
        given_up: Callable[[], bool] = _NEVER,
        *,
        done: Callable[[Sequence[VideoId], StatsByVideo], T],
        until: float | None = None,
        whole: bool = True,
        probe: bool = False,
    ) -> Result[T, UpstreamError]:
        """Attempts until one counts, each with a slot of the gate and within the call timeout
        (``given_up``: the fetch failed meanwhile, so a call that got its slot late is not made);
        what a successful call found is handed back as ``done(ids, found)``, a failure as it is.
        ``whole``: the attempts are the whole fetch, which the breaker is told of (``probe``: as
        its probe). ``until``: the fetch's deadline (loop time), kept in every wait here, whose
        passing fails the fetch with the deadline's ``UpstreamTimeout``."""
        policy, gate = self._policy, self._gate
        attempt = 0
        outcome: Result[T, UpstreamError] | None = None
        try:
            while True:
                # The gate's coroutine only when the pool is contested (perf/RESULTS.md, "The
                # `guarded` reference", item 1).
                if not gate.try_enter(flow) and not await _within(gate.enter(flow), until):
                    outcome = self._failed(
                        UpstreamBusy(f"{gate.waiting:,} YouTube calls are waiting for a connection")
                    )
                    return outcome
                try:
                    if given_up():
                        return Success(done(ids, {}))
                    started = self._clock()
                    # One timer for the call and the deadline, whichever ends first (perf/RESULTS.md,
                    # "The `guarded` reference", item 1: ~4 µs per asyncio.timeout).
                    ends = asyncio.get_running_loop().time() + policy.call_timeout_s
                    by_deadline = until is not None and until < ends
                    try:
                        async with asyncio.timeout_at(until if by_deadline else ends):
                            result = await self._call(ids)
                    except TimeoutError:
                        if by_deadline:
                            raise  # the fetch's deadline, not the call's: answered below
                        self._metrics.upstream_call("UpstreamTimeout", self._clock() - started)
                        outcome = self._failed(
                            UpstreamTimeout(f"a videos.list call took over {policy.call_timeout_s:g}s")
                        )
                        return outcome
                finally:
                    gate.leave(flow)
                if isinstance(result, Success):
                    self._metrics.upstream_call("ok", self._clock() - started)
                    outcome = Success(done(ids, result.unwrap()))
                    return outcome
                error = result.failure()
                self._metrics.upstream_call(type(error).__name__, self._clock() - started)
                if attempt >= policy.retries or not is_transient(error):
                    outcome = self._failed(error)
                    return outcome
                delay = self._rng() * min(policy.backoff_cap_s, policy.backoff_base_s * 2**attempt)
                attempt += 1
                self._log.debug("youtube.retry", attempt=attempt, delay_s=round(delay, 4), error=error.detail)
                await _within(self._sleep(delay), until)
        except TimeoutError:
            if until is None or self._late is None:
                raise
            return self._late  # only a whole fetch has an until
        finally:
            if whole and self.breaker is not None:  # the deadline's timeout counts neither way
                self.breaker.settle(outcome, probe)

    def _failed(self, error: UpstreamError) -> Failure[UpstreamError]:
        if isinstance(error, UpstreamMisconfigured) and not self._misconfiguration_logged:
            self._misconfiguration_logged = True
            self._log.error(
                "youtube.misconfigured",
                detail=error.detail,
                hint="check YOUTUBE_API_KEY and YOUTUBE_API_URL; logged once",
            )
        return Failure(error)
