"""``SourceReader`` over ``playlistItems.list`` and ``channels.list``, a unit of quota a call."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable

from returns.result import Failure, Result, Success

from influencer_stats.algebras import EventLog
from influencer_stats.algebras.youtube import YouTubeGet
from influencer_stats.domain.models import (
    CollectionSource,
    InvalidUpstreamData,
    ReadError,
    SourceNotFound,
    SourceTooLarge,
    UpstreamBusy,
    UpstreamError,
    UpstreamTimeout,
    VideoId,
)
from influencer_stats.interpreters.readers.youtube_wire import (
    PAGE_SIZE,
    ReadFailure,
    channel_url,
    failure,
    parse_page,
    parse_uploads,
    playlist_url,
)
from influencer_stats.interpreters.youtube.call_gate import CallGate, Flow
from influencer_stats.interpreters.youtube.youtube_api import is_transient

#: Spends a unit before a call: ``None`` to make it, else why not (``QuotaSpender.spend``).
Spend = Callable[[], Awaitable[UpstreamError | None]]
#: Whether so many more calls fit in today's budget: ``None``, else why not (``QuotaSpender.afford``).
Afford = Callable[[int], UpstreamError | None]


class YouTubeSourceReader:
    """Reads a playlist a page of 50 at a time (``pageToken``), a channel through its uploads
    playlist (``channels.list`` first), never ``search.list`` (100 units a call).

    Every call first takes a slot of ``gate`` (the process's YouTube connections, shared with
    the stats' ``videos.list`` calls; each read is a flow of its own, so reads and stats
    requests take turns: ``CallGate``), then spends a unit (``spend``, the process's quota
    spender, when there is a budget: retries are calls), then is cut at ``call_timeout_s``:
    no unit is spent and no call timed while it waits for a connection. A full gate fails the
    read with ``UpstreamBusy``. A call is retried ``retries`` times when transient (5xx, 429,
    a dropped connection), after a backoff doubling from ``backoff_s``; the whole read, its
    waits included, is cut at ``deadline_s`` (``UpstreamTimeout``).

    After the first page, YouTube's count says what the read will cost: a list longer than
    ``limit`` is refused, and one whose remaining pages do not fit in what is left of today's
    budget (``afford``) is refused with its ``QuotaExhausted``, spending nothing more. A page
    naming a next page token seen before, or holding no item yet naming a next page, is
    invalid data at once, as is a list whose pages run past its own count (more than twice as
    many pages as ``limit`` needs). ``get`` is the HTTP client's (``YouTubeGet``); ``sleep``
    is injected.
    """

    def __init__(
        self,
        get: YouTubeGet,
        api_root: str,
        log: EventLog,
        gate: CallGate,
        *,
        spend: Spend | None = None,
        afford: Afford | None = None,
        call_timeout_s: float,
        deadline_s: float,
        retries: int,
        backoff_s: float = 0.05,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._get = get
        self._root = api_root
        self._log = log
        self._gate = gate
        self._spend = spend
        self._afford = afford
        self._call_timeout_s = call_timeout_s
        self._deadline_s = deadline_s
        self._retries = retries
        self._backoff_s = backoff_s
        self._sleep = sleep

    async def videos(self, source: CollectionSource, limit: int) -> Result[tuple[VideoId, ...], ReadError]:
        calls = [0]
        flow = Flow()  # a read's calls are a flow of the gate of their own
        try:
            async with asyncio.timeout(self._deadline_s):
                read = await self._read(source, limit, calls, flow)
        except TimeoutError:
            read = Failure(UpstreamTimeout(f"reading the {source.kind} took over {self._deadline_s:g} s"))
        self._log.info(
            "source.read",
            kind=source.kind,
            source=source.id,
            calls=calls[0],
            videos=len(read.unwrap()) if isinstance(read, Success) else None,
            error=None if isinstance(read, Success) else type(read.failure()).__name__,
        )
        return read

    async def _read(
        self, source: CollectionSource, limit: int, calls: list[int], flow: Flow
    ) -> Result[tuple[VideoId, ...], ReadError]:
        playlist = source.id
        if source.kind == "channel":
            body = await self._call(channel_url(self._root, source.id), source, calls, flow)
            if not isinstance(body, Success):
                return Failure(body.failure())
            uploads = parse_uploads(source, body.unwrap())
            if not isinstance(uploads, Success):
                return Failure(uploads.failure())
            playlist = uploads.unwrap()
        videos: list[VideoId] = []
        token: str | None = None
        tokens: set[str] = set()  # every page token asked for: one named again is a loop
        for _ in range(2 * (limit // PAGE_SIZE + 1)):
            body = await self._call(playlist_url(self._root, playlist, token), source, calls, flow)
            if not isinstance(body, Success):
                return Failure(body.failure())
            parsed = parse_page(body.unwrap())
            if not isinstance(parsed, Success):
                return Failure(parsed.failure())
            page = parsed.unwrap()
            videos.extend(page.videos)
            if page.total > limit or len(videos) > limit:
                return Failure(SourceTooLarge(source, max(page.total, len(videos)), limit))
            if page.next_token is None:
                return Success(tuple(videos))
            if page.items == 0:
                return Failure(
                    InvalidUpstreamData(f"a page of the {source.kind} held nothing yet named a next one")
                )
            if page.next_token in tokens:
                return Failure(InvalidUpstreamData(f"the {source.kind}'s pages named a page token again"))
            if token is None and self._afford is not None:  # the first page: what the rest costs
                refused = self._afford(max(1, math.ceil(page.total / PAGE_SIZE) - 1))
                if refused is not None:
                    return Failure(refused)
            token = page.next_token
            tokens.add(token)
        return Failure(InvalidUpstreamData(f"the {source.kind}'s pages ran past the count YouTube gave"))

    async def _call(
        self, url: str, source: CollectionSource, calls: list[int], flow: Flow
    ) -> Result[bytes, ReadFailure]:
        """One list call's 200 body, retried while transient; each attempt holds a connection
        (a slot of the gate), then spends a unit, then is timed."""
        attempt, gate = 0, self._gate
        while True:
            if not gate.try_enter(flow) and not await gate.enter(flow):
                return Failure(UpstreamBusy(f"{gate.waiting:,} YouTube calls are waiting for a connection"))
            try:
                refused = None if self._spend is None else await self._spend()
                if refused is not None:
                    return Failure(refused)
                calls[0] += 1
                outcome = await self._attempt(url, source)
            finally:
                gate.leave(flow)
            if isinstance(outcome, Success) or attempt >= self._retries:
                return outcome
            error = outcome.failure()
            if isinstance(error, SourceNotFound) or not is_transient(error):
                return outcome
            await self._sleep(self._backoff_s * 2**attempt)
            attempt += 1

    async def _attempt(self, url: str, source: CollectionSource) -> Result[bytes, ReadFailure]:
        try:
            async with asyncio.timeout(self._call_timeout_s):
                got = await self._get(url)
        except TimeoutError:
            return Failure(UpstreamTimeout(f"a {source.kind} call took over {self._call_timeout_s:g} s"))
        if not isinstance(got, Success):
            return Failure(got.failure())
        status, body = got.unwrap()
        if status == 200 and body is not None:
            return Success(body)
        return Failure(failure(source, status, body))
