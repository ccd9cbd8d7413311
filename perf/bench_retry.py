"""Micro-benchmark behind the retry decision: our loop against tenacity on the hot path.

    python perf/bench_retry.py

Every YouTube call goes through the retry wrapper, and nearly every call
succeeds at once, so what matters is the cost of a *successful* first attempt.
Both sides wrap the same no-op coroutine; tenacity is configured like ours
(retry on a transient result, exponential backoff with jitter, 3 attempts).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence

from returns.result import Result, Success
from tenacity import AsyncRetrying, retry_if_result, stop_after_attempt, wait_random_exponential

from influencer_stats.domain.models import StatsByVideo, UpstreamError, VideoId
from influencer_stats.interpreters.metrics.noop import NoMetrics
from influencer_stats.interpreters.youtube.call_gate import CallGate
from influencer_stats.interpreters.youtube.youtube_api import MAX_IDS_PER_CALL, is_transient
from influencer_stats.interpreters.youtube.youtube_source import UpstreamPolicy, YouTubeVideoStatsSource
from influencer_stats.testing.event_log import CapturingEventLog

IDS = [VideoId("-4lB5EKS5Uk")]
OK: Result[StatsByVideo, UpstreamError] = Success({})


async def call(ids: Sequence[VideoId]) -> Result[StatsByVideo, UpstreamError]:
    return OK


def _transient(result: Result[StatsByVideo, UpstreamError]) -> bool:
    return not isinstance(result, Success) and is_transient(result.failure())


async def tenacity_call() -> Result[StatsByVideo, UpstreamError]:
    retrying = AsyncRetrying(
        retry=retry_if_result(_transient),
        wait=wait_random_exponential(multiplier=0.05, max=0.5),
        stop=stop_after_attempt(3),
        reraise=True,
    )
    async for attempt in retrying:
        with attempt:
            result = await call(IDS)
        if attempt.retry_state.outcome and not attempt.retry_state.outcome.failed:
            attempt.retry_state.set_result(result)
    return result


async def main(n: int = 20_000) -> None:
    policy = UpstreamPolicy(ids_per_call=MAX_IDS_PER_CALL, call_timeout_s=1.0, retries=2)
    gate = CallGate(64, per_flow=16, max_waiting=2048)
    source = YouTubeVideoStatsSource(
        call, policy, gate, CapturingEventLog(), NoMetrics(), clock=time.monotonic
    )

    def ours() -> Awaitable[Result[StatsByVideo, UpstreamError]]:
        return source._call_with_retries(IDS, None)

    runs: list[tuple[str, Callable[[], Awaitable[Result[StatsByVideo, UpstreamError]]]]] = [
        (
            "ours (YouTubeVideoStatsSource._call_with_retries, the call gate and asyncio.timeout included)",
            ours,
        ),
        ("tenacity AsyncRetrying", tenacity_call),
    ]
    for label, run in runs:
        for _ in range(1_000):
            await run()
        started = time.perf_counter()
        for _ in range(n):
            await run()
        print(f"{label}: {(time.perf_counter() - started) / n * 1e6:.1f} µs per successful call")


if __name__ == "__main__":
    asyncio.run(main())
