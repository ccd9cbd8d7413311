"""``VideoStatsSource`` over ``videos.list``: fan-out, batching, retries, deadline."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from returns.result import Failure, Result, Success

from influencer_stats.algebras import EventLog, Metrics
from influencer_stats.interpreters.videos.youtube_api import (
    MAX_IDS_PER_CALL,
    StatsByVideo,
    VideosListCall,
    is_transient,
)
from influencer_stats.logic.models import (
    UpstreamError,
    UpstreamMisconfigured,
    UpstreamTimeout,
    VideoBatch,
    VideoId,
)


@dataclass(frozen=True, slots=True)
class UpstreamPolicy:
    """How to call: ids per call, concurrency, timeouts and retries.

    ``ids_per_call=1`` is the original's one request per video;
    ``MAX_IDS_PER_CALL`` (50) is batching. ``deadline_s`` bounds a whole
    ``fetch``, retries included; ``call_timeout_s`` bounds each attempt.
    """

    ids_per_call: int
    concurrency: int
    call_timeout_s: float
    deadline_s: float
    retries: int
    backoff_base_s: float = 0.05
    backoff_cap_s: float = 0.5

    def __post_init__(self) -> None:
        if not 1 <= self.ids_per_call <= MAX_IDS_PER_CALL:
            raise ValueError(f"ids_per_call must be 1-{MAX_IDS_PER_CALL}")
        if self.concurrency < 1 or self.retries < 0:
            raise ValueError("concurrency must be >= 1 and retries >= 0")


class YouTubeVideoStatsSource:
    """``VideoStatsSource`` that splits a request into ``videos.list`` calls.

    Calls of ``policy.ids_per_call`` ids run concurrently, at most
    ``policy.concurrency`` at a time per fetch (the client's connection pool
    bounds the process). A transient failure (5xx, 429, connection error) is
    retried with capped exponential backoff and full jitter, at most
    ``policy.retries`` times and only while the deadline leaves room; quota,
    misconfiguration, invalid data and timeouts are not. The first failure
    stops calls not yet started and fails the fetch. The clock, sleep and
    random source are injected so tests of time need no sleeping.
    """

    def __init__(
        self,
        call: VideosListCall,
        policy: UpstreamPolicy,
        log: EventLog,
        metrics: Metrics,
        *,
        clock: Callable[[], float],
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self._call = call
        self._policy = policy
        self._log = log
        self._metrics = metrics
        self._clock = clock
        self._sleep = sleep
        self._rng = rng
        self._misconfiguration_logged = False

    async def fetch(self, ids: Sequence[VideoId]) -> Result[VideoBatch, UpstreamError]:
        if not ids:
            return Success(VideoBatch({}, ()))
        policy = self._policy
        deadline_at = self._clock() + policy.deadline_s
        step = policy.ids_per_call
        chunks = [ids[i : i + step] for i in range(0, len(ids), step)]
        try:
            if len(chunks) == 1:  # the common case: no task, no semaphore, one timer per attempt
                loop_deadline = asyncio.get_running_loop().time() + policy.deadline_s
                results = [await self._call_with_retries(chunks[0], deadline_at, loop_deadline)]
            else:
                async with asyncio.timeout(policy.deadline_s):
                    results = await self._fan_out(chunks, deadline_at)
        except TimeoutError:
            return Failure(UpstreamTimeout(f"no complete answer within the {policy.deadline_s:g}s deadline"))
        found: StatsByVideo = {}
        for result in results:
            match result:
                case Success(answered):
                    found.update(answered)
                case Failure(error):
                    return self._failed(error)
        stats: StatsByVideo = {}
        missing: list[VideoId] = []
        for video_id in ids:  # one pass, in request order
            video = found.get(video_id)
            if video is None:
                missing.append(video_id)
            else:
                stats[video_id] = video
        return Success(VideoBatch(stats, tuple(missing)))

    async def _fan_out(
        self, chunks: list[Sequence[VideoId]], deadline_at: float
    ) -> list[Result[StatsByVideo, UpstreamError]]:
        gate = asyncio.Semaphore(self._policy.concurrency)
        failed = asyncio.Event()

        async def one(chunk: Sequence[VideoId]) -> Result[StatsByVideo, UpstreamError]:
            async with gate:
                if failed.is_set():
                    return Success({})  # the fetch already failed; spare the quota
                result = await self._call_with_retries(chunk, deadline_at)
                if isinstance(result, Failure):
                    failed.set()
                return result

        return await asyncio.gather(*(one(c) for c in chunks))

    async def _call_with_retries(
        self, ids: Sequence[VideoId], deadline_at: float, loop_deadline: float | None = None
    ) -> Result[StatsByVideo, UpstreamError]:
        """Attempts until one counts; each within the call timeout. With ``loop_deadline`` (the
        fetch's deadline on the loop's clock, when no timer around the fetch enforces it) an
        attempt's one timer fires at whichever comes first, and the deadline's ``TimeoutError``
        propagates (the fetch's answer) where a call's own timeout is a failed attempt."""
        policy = self._policy
        loop = asyncio.get_running_loop()
        attempt = 0
        while True:
            started = self._clock()
            call_ends = loop.time() + policy.call_timeout_s
            by_deadline = loop_deadline is not None and loop_deadline <= call_ends
            try:
                async with asyncio.timeout_at(loop_deadline if by_deadline else call_ends):
                    result = await self._call(ids)
            except TimeoutError:
                if by_deadline:
                    raise
                self._metrics.upstream_call("UpstreamTimeout", self._clock() - started)
                return Failure(UpstreamTimeout(f"a videos.list call took over {policy.call_timeout_s:g}s"))
            outcome = "ok" if isinstance(result, Success) else type(result.failure()).__name__
            self._metrics.upstream_call(outcome, self._clock() - started)
            if not isinstance(result, Failure) or attempt >= policy.retries:
                return result
            error = result.failure()
            if not is_transient(error):
                return result
            delay = self._rng() * min(policy.backoff_cap_s, policy.backoff_base_s * 2**attempt)
            if self._clock() + delay >= deadline_at:
                return result
            attempt += 1
            self._log.debug("youtube.retry", attempt=attempt, delay_s=round(delay, 4), error=error.detail)
            await self._sleep(delay)

    def _failed(self, error: UpstreamError) -> Result[VideoBatch, UpstreamError]:
        if isinstance(error, UpstreamMisconfigured) and not self._misconfiguration_logged:
            self._misconfiguration_logged = True
            self._log.error(
                "youtube.misconfigured",
                detail=error.detail,
                hint="check YOUTUBE_API_KEY and YOUTUBE_API_URL; logged once",
            )
        return Failure(error)
