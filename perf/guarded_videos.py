"""The ``guarded`` reference's videos.list calls, made by hand as the ``aiohttp-batched`` client makes them.

One of the three parts of :mod:`perf.guarded` (the app), grouped by concern: here, the fetch
(50 distinct ids per call, at most ``INFLUENCER_STATS_UPSTREAM_CONCURRENCY`` calls at once,
each within ``INFLUENCER_STATS_UPSTREAM_TIMEOUT``, the whole within
``INFLUENCER_STATS_UPSTREAM_DEADLINE``), the call's session, and the answer read within 1 MiB
and checked by the service's wire format
(:func:`influencer_stats.interpreters.youtube.youtube_api.answer`).

:class:`GuardedVideos` is a base class of :class:`perf.guarded.Guarded`, not an object it
holds: ``Guarded.fetch``, ``Guarded.call`` and ``Guarded.videos_list`` are looked up as when
they were written in it (no extra hop on the measured path), and :mod:`perf.per_request` peels
them, and stubs ``videos_list``, on the app itself. ``Guarded.__rsgi_init__`` sets what they read.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import aiohttp
from returns.result import Failure, Result, Success

from influencer_stats.bounded import read_bounded
from influencer_stats.domain.models import (
    StatsByVideo,
    UpstreamError,
    UpstreamTimeout,
    UpstreamUnavailable,
    VideoId,
)
from influencer_stats.interpreters.youtube.youtube_api import (
    MAX_BODY_BYTES,
    MAX_IDS_PER_CALL,
    answer,
    request_url,
)

if TYPE_CHECKING:
    from influencer_stats.settings import Settings
    from perf.guarded_answers import Metrics


class GuardedVideos:
    """The calls of :class:`perf.guarded.Guarded` to videos.list, recorded in its :class:`~perf.guarded_answers.Metrics`."""

    # Set by Guarded (``__init__`` and ``__rsgi_init__``, from the settings ``fast`` resolves).
    session: aiohttp.ClientSession | None
    url: str
    headers: dict[str, str]
    call_timeout: float
    deadline: float
    concurrency: int
    metrics: Metrics

    async def fetch(self, ids: list[VideoId]) -> StatsByVideo | UpstreamError:
        """Statistics by id: 50 ids per call; each call within the call timeout, all within the deadline."""
        if len(ids) <= MAX_IDS_PER_CALL and self.call_timeout <= self.deadline:
            outcome = await self.call(ids)  # its own timeout ends it before the deadline could
            return outcome.unwrap() if isinstance(outcome, Success) else outcome.failure()
        chunks = [ids[i : i + MAX_IDS_PER_CALL] for i in range(0, len(ids), MAX_IDS_PER_CALL)]
        gate = asyncio.Semaphore(self.concurrency)
        first: list[UpstreamError] = []

        async def gated(chunk: list[VideoId]) -> Result[StatsByVideo, UpstreamError]:
            async with gate:
                if first:  # the fetch has failed: spare the calls not made yet
                    return Success({})
                outcome = await self.call(chunk)
                if isinstance(outcome, Failure):
                    first.append(outcome.failure())
                return outcome

        try:
            async with asyncio.timeout(self.deadline):
                outcomes = await asyncio.gather(*(gated(chunk) for chunk in chunks))
        except TimeoutError:
            return UpstreamTimeout(f"no complete answer within the {self.deadline:g}s deadline")
        if first:
            return first[0]
        found: StatsByVideo = {}
        for outcome in outcomes:
            found.update(outcome.unwrap())
        return found

    async def call(self, ids: Sequence[VideoId]) -> Result[StatsByVideo, UpstreamError]:
        """One videos.list call within the call timeout, recorded."""
        started = time.perf_counter()
        try:
            async with asyncio.timeout(self.call_timeout):
                outcome = await self.videos_list(ids)
        except TimeoutError:
            outcome = Failure(UpstreamTimeout(f"a videos.list call took over {self.call_timeout:g}s"))
        kind = "ok" if isinstance(outcome, Success) else type(outcome.failure()).__name__
        self.metrics.upstream_call(kind, time.perf_counter() - started)
        return outcome

    async def videos_list(self, ids: Sequence[VideoId]) -> Result[StatsByVideo, UpstreamError]:
        """The call itself, as the ``aiohttp-batched`` client makes it: its answer bounded and checked."""
        session = self.session
        assert session is not None, "__rsgi_init__ has not run"
        try:
            async with session.get(
                request_url(self.url, ids),
                headers=self.headers,
                skip_auto_headers=("User-Agent",),
                allow_redirects=False,
            ) as response:
                body = await read_bounded(
                    response.content.iter_any(), MAX_BODY_BYTES, response.content_length
                )
                status = response.status
        except aiohttp.ServerTimeoutError:
            return Failure(UpstreamTimeout("YouTube call timed out (ServerTimeoutError)"))
        except aiohttp.ClientError as exc:
            return Failure(UpstreamUnavailable(f"YouTube connection failed ({type(exc).__name__})"))
        return answer(status, body, MAX_BODY_BYTES)


async def open_session(settings: Settings) -> aiohttp.ClientSession:
    """The ``aiohttp-batched`` client's session: its pool and socket timeouts, no total timeout."""
    pool = settings.upstream_connections
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=pool, limit_per_host=pool, ttl_dns_cache=300),
        timeout=aiohttp.ClientTimeout(
            total=None,
            sock_connect=settings.upstream_call_timeout_s,
            sock_read=settings.upstream_call_timeout_s,
        ),
    )
