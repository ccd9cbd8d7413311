"""The service written by hand in one module, keeping what ``fast`` guarantees: the lab's ``guarded`` reference.

:mod:`perf.minimal` is the floor (the same answer with no guarantee at all); this is
the same service with, on the measured path, what the ``fast`` profile keeps there,
written without the architecture (no algebras, wrappers, ``Result`` plumbing, route
table or ``HttpApi``): one class whose ``__rsgi__`` answers each request.

- Collection ids: the service's rules (:func:`influencer_stats.domain.validation.parse_collection_id`,
  shared, not copied); a path outside ASCII is a 400, an invalid id a 422, an unknown
  collection a 404, each an RFC 9457 problem (``application/problem+json``) with the
  service's bytes.
- ``X-Request-Id``: a sane client id echoed, else 16 new hex digits, on every answer.
- The stats cache (``--cache stats``, as ``fast``): fresh for ``INFLUENCER_STATS_CACHE_TTL``,
  then served stale while one refresh runs, stale-if-error, LRU bound, single flight per
  collection, dropped by a write (a computation that started before it stores nothing);
  ``Cache-Status`` and ``Age`` rendered as the service renders them (kept per entry while
  their whole seconds do not change). ``--cache none``: computed on every request.
- Metrics, recorded as ``fast`` records them (plain dicts, one ``bisect``): the requests
  counter and ``influencer_stats_http_request_duration_seconds`` (the service's buckets),
  the stats-cache events, the videos.list calls and their latency; ``GET /metrics``
  renders them.
- The video fetch: the ``aiohttp-batched`` client's session and calls (50 distinct ids per
  call, at most ``INFLUENCER_STATS_UPSTREAM_CONCURRENCY`` at once), each bounded by
  ``INFLUENCER_STATS_UPSTREAM_TIMEOUT`` and the whole fetch by
  ``INFLUENCER_STATS_UPSTREAM_DEADLINE`` (one ``asyncio.timeout`` when a single call cannot
  outlast the deadline); the answer read within 1 MiB and checked by the service's wire
  format (:func:`influencer_stats.interpreters.youtube.youtube_api.answer`: status, typed
  decoding, canonical counts); a failure is the service's 502/503/504 problem.
- One ``stats.computed`` line per computed stats (with the request id), through the
  logger ``fast`` uses: the JSON-lines logger under the rate-limit wrapper
  (``INFLUENCER_STATS_LOG_RATE_LIMIT`` events/s, flushed off the request path).

What it leaves out is :data:`perf.references.GUARDED_LEAVES_OUT`. Its numbers (timeouts,
cache windows, limits, log level) are the settings ``main.py --profile fast`` resolves
from the same environment (:func:`perf.profiles.service_settings`), on Granian with the
service's arguments (:func:`perf.rsgi_ceiling.serve`)::

    YOUTUBE_API_URL=http://127.0.0.1:9000/youtube/v3/videos YOUTUBE_API_KEY=k \\
        python -m perf.guarded --port 8094 [--cache stats|none]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import time
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Sequence
from random import getrandbits
from typing import TYPE_CHECKING, Final

import aiohttp
import orjson
from returns.result import Failure, Result, Success

from influencer_stats.bounded import read_bounded
from influencer_stats.domain.models import (
    CollectionId,
    CollectionNotFound,
    InvalidUpstreamData,
    QuotaExceeded,
    StatsByVideo,
    UpstreamError,
    UpstreamMisconfigured,
    UpstreamTimeout,
    UpstreamUnavailable,
    VideoId,
)
from influencer_stats.domain.validation import InvalidInput, parse_collection_body, parse_collection_id
from influencer_stats.interpreters.logging.dropping import DroppingEventLog
from influencer_stats.interpreters.logging.structlog_json import StructlogEventLog
from influencer_stats.interpreters.metrics.families import (
    CACHE,
    LATENCY,
    LATENCY_BUCKETS,
    REQUESTS,
    UPSTREAM,
    UPSTREAM_LATENCY,
)
from influencer_stats.interpreters.youtube.youtube_api import (
    API_KEY_HEADER,
    MAX_BODY_BYTES,
    MAX_IDS_PER_CALL,
    answer,
    request_url,
)
from perf.rsgi_ceiling import add_granian_arguments, granian_options, serve

if TYPE_CHECKING:
    from granian._granian import RSGIHTTPProtocol as HTTPProtocol
    from granian.rsgi import Scope

    from influencer_stats.settings import Settings

CACHE_CHOICES: Final = ("stats", "none")
_CACHE_ENV: Final = "PERF_GUARDED_CACHE"  # --cache, for the worker processes that import this
#: The service's request ids (``http.api._REQUEST_ID``; tests/unit/test_perf_guarded.py compares).
REQUEST_ID: Final = re.compile(r"[A-Za-z0-9._:-]{1,128}")
#: The service's route templates, as its metrics label them.
STATS_ROUTE: Final = "/collections/{id}/stats"
COLLECTION_ROUTE: Final = "/collections/{id}"
UNMATCHED: Final = "unmatched"
MAX_REQUEST_BODY: Final = 1024 * 1024  # the service's http.api.MAX_BODY_BYTES

JSON: Final = "application/json"
PROBLEM_JSON: Final = "application/problem+json"
_TYPE: Final = "urn:influencer-stats:problem:"
_PREFIX: Final = "/collections/"
_STATS_SUFFIX: Final = "/stats"
_MISS: Final = ("cache-status", "influencer-stats; fwd=miss; stored")
_EMPTY_BODY: Final = b'{"impressions":0,"engagements":0,"score":0,"videos":0,"missing":[]}'
_HEALTHY: Final = b'{"status":"ok"}'
#: The service's ``method`` label values besides ``other`` (``interpreters.metrics.prometheus``).
METHOD_LABELS: Final = frozenset(
    {"CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE"}
)

Headers = list[tuple[str, str]]
#: status, content type, headers (without the request id), body.
Reply = tuple[int, str, tuple[tuple[str, str], ...], bytes]


def problem(status: int, slug: str, title: str, detail: str, *extra: tuple[str, object]) -> Reply:
    """An RFC 9457 problem, as the service's ``http.problems.problem`` writes it."""
    document: dict[str, object] = {"type": _TYPE + slug, "title": title, "status": status, "detail": detail}
    document.update(extra)
    return status, PROBLEM_JSON, (), orjson.dumps(document)


def invalid(error: InvalidInput) -> Reply:
    """422 for a field that breaks the service's rules (its values are short strings or ints)."""
    value = error.value
    detail = f"{error.field} {error.reason} (got {value!r})"
    return problem(
        422, "validation-error", "Invalid request", detail, ("field", error.field), ("value", value)
    )


NOT_ASCII: Final = problem(400, "invalid-path", "Invalid path", "the path must be ASCII once percent-decoded")


def failed(error: CollectionNotFound | UpstreamError) -> Reply:
    """The service's problem for each failure guarded can meet."""
    if isinstance(error, CollectionNotFound):
        detail = f"no collection has id {error.id!r}"
        return problem(404, "collection-not-found", "Collection not found", detail)
    if isinstance(error, UpstreamTimeout):
        return problem(504, "upstream-timeout", "YouTube timed out", error.detail)
    if isinstance(error, InvalidUpstreamData):
        return problem(502, "upstream-invalid-response", "YouTube sent an invalid response", error.detail)
    if isinstance(error, UpstreamMisconfigured):
        return problem(502, "upstream-misconfigured", "YouTube rejected the service's request", error.detail)
    if isinstance(error, QuotaExceeded):
        status, _, _, body = problem(503, "upstream-quota-exceeded", "YouTube quota exceeded", error.detail)
        return status, PROBLEM_JSON, (("retry-after", str(error.retry_after_s)),), body
    return problem(502, "upstream-unavailable", "YouTube unavailable", error.detail)


class Entry:
    """A cached stats body, when (monotonic) it was stored, and its cache headers as last rendered."""

    __slots__ = ("body", "headers", "seconds", "stored_at")

    def __init__(self, body: bytes, stored_at: float) -> None:
        self.body = body
        self.stored_at = stored_at
        self.seconds: tuple[int, int, str | None] | None = None
        self.headers: tuple[tuple[str, str], ...] = ()

    def reply(self, ttl_left: float, age: float, stale: str | None) -> Reply:
        """200 with ``Cache-Status`` and ``Age`` in whole seconds, rendered once per change."""
        seconds = (int(ttl_left), int(age), stale)
        if seconds != self.seconds:
            status = f"influencer-stats; hit; ttl={seconds[0]}" + (
                "" if stale is None else f"; detail={stale}"
            )
            self.headers = (("cache-status", status), ("age", str(seconds[1])))
            self.seconds = seconds
        return 200, JSON, self.headers, self.body


class Metrics:
    """The service's request, cache and upstream series, recorded in plain dicts as ``fast`` records them."""

    def __init__(self) -> None:
        self.requests: dict[tuple[str, str, str], int] = {}
        self.latency: dict[str, list[int]] = {}
        self.latency_sum: dict[str, float] = {}
        self.cache: dict[str, int] = {}
        self.upstream: dict[str, int] = {}
        self.upstream_latency = [0] * (len(LATENCY_BUCKETS) + 1)
        self.upstream_sum = 0.0
        self.dropped = 0

    def request(self, route: str, method: str, status: int, seconds: float) -> None:
        key = (route, method, str(status))
        self.requests[key] = self.requests.get(key, 0) + 1
        counts = self.latency.get(route)
        if counts is None:
            counts = self.latency[route] = [0] * (len(LATENCY_BUCKETS) + 1)
            self.latency_sum[route] = 0.0
        counts[bisect_left(LATENCY_BUCKETS, seconds)] += 1
        self.latency_sum[route] += seconds

    def upstream_call(self, outcome: str, seconds: float) -> None:
        self.upstream[outcome] = self.upstream.get(outcome, 0) + 1
        self.upstream_latency[bisect_left(LATENCY_BUCKETS, seconds)] += 1
        self.upstream_sum += seconds

    def logs_dropped(self, count: int) -> None:
        self.dropped += count

    def render(self) -> bytes:
        """The Prometheus text format of what is recorded (the service's names and buckets)."""
        lines = [f"# TYPE {REQUESTS} counter"]
        for (route, method, status), n in sorted(self.requests.items()):
            lines.append(f'{REQUESTS}_total{{method="{method}",route="{route}",status="{status}"}} {n}')
        lines.append(f"# TYPE {LATENCY} histogram")
        for route, counts in sorted(self.latency.items()):
            lines += _histogram(LATENCY, f'route="{route}",', counts, self.latency_sum[route])
        lines.append(f"# TYPE {CACHE} counter")
        lines += [f'{CACHE}_total{{kind="{kind}"}} {n}' for kind, n in sorted(self.cache.items())]
        lines.append(f"# TYPE {UPSTREAM} counter")
        lines += [f'{UPSTREAM}_total{{outcome="{kind}"}} {n}' for kind, n in sorted(self.upstream.items())]
        lines.append(f"# TYPE {UPSTREAM_LATENCY} histogram")
        lines += _histogram(UPSTREAM_LATENCY, "", self.upstream_latency, self.upstream_sum)
        return ("\n".join(lines) + "\n").encode()


def _histogram(name: str, labels: str, counts: list[int], total: float) -> list[str]:
    lines, cumulative = [], 0
    for bound, count in zip((*LATENCY_BUCKETS, float("inf")), counts, strict=True):
        cumulative += count
        le = "+Inf" if bound == float("inf") else repr(bound)
        lines.append(f'{name}_bucket{{{labels}le="{le}"}} {cumulative}')
    lines += [
        f"{name}_count{{{labels.rstrip(',')}}} {cumulative}",
        f"{name}_sum{{{labels.rstrip(',')}}} {total}",
    ]
    return lines


class Guarded:
    """The RSGI app. Granian calls ``__rsgi_init__`` in its worker before serving, ``__rsgi_del__`` after."""

    def __init__(self, cache: str) -> None:
        self.cached = cache == "stats"
        self.collections: dict[str, tuple[VideoId, ...]] = {}
        self.entries: OrderedDict[str, Entry] = OrderedDict()
        self.flights: dict[str, asyncio.Task[bytes | CollectionNotFound | UpstreamError]] = {}
        self.writes: dict[str, int] = {}  # writes per collection: a computation older than one stores nothing
        self.metrics = Metrics()
        #: Chosen once: a stats request calls one or the other, never asks which.
        self.stats_for = self.cached_stats if self.cached else self.stats
        self.session: aiohttp.ClientSession | None = None
        self.flusher: asyncio.Task[None] | None = None

    def __rsgi_init__(self, loop: asyncio.AbstractEventLoop) -> None:
        from perf.profiles import service_settings

        self.settings = settings = service_settings(os.environ)
        self.url = settings.youtube_api_url
        key = settings.youtube_api_key
        self.headers = {API_KEY_HEADER: key.value} if key else {}
        self.call_timeout = settings.upstream_call_timeout_s
        self.deadline = settings.upstream_deadline_s
        self.concurrency = settings.upstream_concurrency
        self.ttl = settings.cache_ttl_s
        self.stale_while_revalidate = settings.cache_stale_while_revalidate_s
        self.stale_if_error = settings.cache_stale_if_error_s
        self.max_entries = settings.cache_max_entries
        self.max_videos = settings.max_videos
        level = settings.log_level
        written = StructlogEventLog(sys.stdout.buffer, settings.secrets(), level=level)
        self.log = DroppingEventLog(written, time.monotonic, limit=settings.log_rate_limit, level=level)
        self.flusher = loop.create_task(self.log.run_flusher(on_dropped=self.metrics.logs_dropped))
        self.session = loop.run_until_complete(_open_session(settings))

    def __rsgi_del__(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.flusher is not None:
            self.flusher.cancel()
            loop.run_until_complete(asyncio.gather(self.flusher, return_exceptions=True))  # flushes once more
        if self.session is not None:
            loop.run_until_complete(self.session.close())

    async def __rsgi__(self, scope: Scope, proto: HTTPProtocol) -> None:
        if scope.proto != "http":
            return
        started = time.perf_counter()
        method = scope.method
        path = scope.path
        given = scope.headers.get("x-request-id")
        request_id = given if given is not None and REQUEST_ID.fullmatch(given) else f"{getrandbits(64):016x}"
        if (
            path.startswith(_PREFIX)
            and path.endswith(_STATS_SUFFIX)
            and (method == "GET" or method == "HEAD")
        ):
            raw = path[13:-6]
            if raw and "/" not in raw:  # the stats route: the measured path
                if not raw.isascii():
                    reply = NOT_ASCII
                else:
                    parsed = parse_collection_id(raw)
                    if isinstance(parsed, Success):
                        reply = await self.stats_for(raw, request_id)
                    else:
                        reply = invalid(parsed.failure())
                self.metrics.request(STATS_ROUTE, method, reply[0], time.perf_counter() - started)
                status, content_type, headers, body = reply
                answer_headers = [("content-type", content_type), *headers, ("x-request-id", request_id)]
                proto.response_bytes(status, answer_headers, b"" if method == "HEAD" else body)
                return
        route, reply = await self.elsewhere(method, path, proto, request_id)
        label = method if method in METHOD_LABELS else "other"  # clients choose methods: a closed set
        self.metrics.request(route, label, reply[0], time.perf_counter() - started)
        status, content_type, headers, body = reply
        answer_headers = [("content-type", content_type), *headers, ("x-request-id", request_id)]
        proto.response_bytes(status, answer_headers, b"" if method == "HEAD" else body)

    # --- GET /collections/{id}/stats ------------------------------------------------------------

    async def stats(self, collection_id: str, request_id: str) -> Reply:
        """Without a cache: computed now, no cache headers."""
        outcome = await self.computed(collection_id, request_id)
        if isinstance(outcome, bytes):
            return 200, JSON, (), outcome
        return failed(outcome)

    async def cached_stats(self, collection_id: str, request_id: str) -> Reply:
        """Fresh, or stale while one refresh runs, from the cache; else computed once for every caller."""
        entry = self.entries.get(collection_id)
        if entry is not None:
            age = time.monotonic() - entry.stored_at
            if age < 0.0:
                age = 0.0
            ttl_left = self.ttl - age
            if ttl_left > 0:
                self._cache_event("hit")
                self.entries.move_to_end(collection_id)
                return entry.reply(ttl_left, age, None)
            if -ttl_left <= self.stale_while_revalidate:
                self._cache_event("stale")
                if collection_id not in self.flights:
                    self._start(collection_id, request_id)
                return entry.reply(ttl_left, age, "revalidating")
        self._cache_event("miss")
        flight = self.flights.get(collection_id)
        if flight is None:
            flight = self._start(collection_id, request_id)
        outcome = await asyncio.shield(flight)  # a caller that goes away does not cancel it for the others
        if isinstance(outcome, bytes):
            return 200, JSON, (_MISS,), outcome
        entry = self.entries.get(collection_id)  # unless a write dropped it meanwhile
        if entry is not None and not isinstance(outcome, CollectionNotFound):
            age = max(0.0, time.monotonic() - entry.stored_at)
            if age <= self.ttl + self.stale_if_error:
                self._cache_event("stale_if_error")
                self.log.warning(
                    "stats.stale_if_error",
                    request_id=request_id,
                    collection=collection_id,
                    age_s=round(age, 1),
                    error=str(outcome),
                )
                return entry.reply(self.ttl - age, age, "stale-if-error")
        return failed(outcome)

    def _cache_event(self, kind: str) -> None:
        cache = self.metrics.cache
        cache[kind] = cache.get(kind, 0) + 1

    def _start(
        self, collection_id: str, request_id: str
    ) -> asyncio.Task[bytes | CollectionNotFound | UpstreamError]:
        task = asyncio.create_task(
            self._refresh(collection_id, request_id, self.writes.get(collection_id, 0))
        )
        self.flights[collection_id] = task
        return task

    async def _refresh(
        self, collection_id: str, request_id: str, writes: int
    ) -> bytes | CollectionNotFound | UpstreamError:
        try:
            outcome = await self.computed(collection_id, request_id)
            if self.writes.get(collection_id, 0) == writes:  # no write since it started
                if isinstance(outcome, bytes):
                    entries = self.entries
                    entries[collection_id] = Entry(outcome, time.monotonic())
                    entries.move_to_end(collection_id)
                    while len(entries) > self.max_entries:
                        entries.popitem(last=False)
                elif isinstance(outcome, CollectionNotFound):
                    self.entries.pop(collection_id, None)
            return outcome
        finally:
            if self.flights.get(collection_id) is asyncio.current_task():
                del self.flights[collection_id]

    def invalidate(self, collection_id: str) -> None:
        """After a write: the entry goes, and a computation in flight will store nothing."""
        self.entries.pop(collection_id, None)
        self.flights.pop(collection_id, None)
        self.writes[collection_id] = self.writes.get(collection_id, 0) + 1

    async def computed(
        self, collection_id: str, request_id: str
    ) -> bytes | CollectionNotFound | UpstreamError:
        """The stats body of a collection computed now, or why not."""
        videos = self.collections.get(collection_id)
        if videos is None:
            return CollectionNotFound(CollectionId(collection_id))
        ids = list(dict.fromkeys(videos))
        if not ids:
            return _EMPTY_BODY
        fetched = await self.fetch(ids)
        if not isinstance(fetched, dict):
            self.log.warning(
                "stats.upstream_failed",
                request_id=request_id,
                collection=collection_id,
                videos=len(ids),
                error=type(fetched).__name__,
                detail=fetched.detail,
            )
            return fetched
        impressions = engagements = likes = counted = 0
        missing = []
        for video_id in ids:
            video = fetched.get(video_id)
            if video is None:
                missing.append(video_id)
                continue
            counted += 1
            liked = video.likes
            impressions += video.views
            engagements += liked + video.comments + video.dislikes
            likes += liked
        self.log.info(
            "stats.computed",
            request_id=request_id,
            collection=collection_id,
            videos=counted,
            missing=len(missing),
        )
        return orjson.dumps(
            {
                "impressions": impressions,
                "engagements": engagements,
                "score": engagements + likes,
                "videos": counted,
                "missing": missing,
            }
        )

    # --- videos.list ------------------------------------------------------------------------------

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

    # --- everything else: not measured ------------------------------------------------------------

    async def elsewhere(
        self, method: str, path: str, proto: HTTPProtocol, request_id: str
    ) -> tuple[str, Reply]:
        """``/healthz``, ``/metrics``, ``GET``/``PUT /collections/{id}``; other paths 404, other methods 405."""
        if path == "/healthz" or path == "/metrics":
            if method not in ("GET", "HEAD"):
                return path, _not_allowed(method, ("GET", "HEAD"))
            if path == "/healthz":
                return path, (200, JSON, (), _HEALTHY)
            return path, (200, "text/plain; version=0.0.4; charset=utf-8", (), self.metrics.render())
        raw = path[len(_PREFIX) :] if path.startswith(_PREFIX) else ""
        if not raw or "/" in raw:
            if raw.endswith(_STATS_SUFFIX) and raw[: -len(_STATS_SUFFIX)] and raw.count("/") == 1:
                return STATS_ROUTE, _not_allowed(method, ("GET", "HEAD"))
            return UNMATCHED, problem(404, "route-not-found", "Not found", f"no route matches {path[:200]!r}")
        if method not in ("GET", "HEAD", "PUT"):
            return COLLECTION_ROUTE, _not_allowed(method, ("GET", "HEAD", "PUT"))
        if not raw.isascii():
            return COLLECTION_ROUTE, NOT_ASCII
        if method == "PUT":
            return COLLECTION_ROUTE, await self.put(raw, proto, request_id)
        parsed = parse_collection_id(raw)
        if not isinstance(parsed, Success):
            return COLLECTION_ROUTE, invalid(parsed.failure())
        videos = self.collections.get(raw)
        if videos is None:
            return COLLECTION_ROUTE, failed(CollectionNotFound(parsed.unwrap()))
        return COLLECTION_ROUTE, (200, JSON, (), orjson.dumps({"videos": videos}))

    async def put(self, raw: str, proto: HTTPProtocol, request_id: str) -> Reply:
        """Store a collection (the service's rules for the id and the body), drop its cached stats."""
        body = await proto()
        if len(body) > MAX_REQUEST_BODY:
            detail = f"the body must be at most {MAX_REQUEST_BODY} bytes"
            return problem(413, "body-too-large", "Request body too large", detail)
        parsed = parse_collection_id(raw)
        if not isinstance(parsed, Success):
            return invalid(parsed.failure())
        try:
            document = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            return problem(400, "malformed-json", "Malformed JSON", f"the body is not valid JSON: {exc}")
        checked = parse_collection_body(document, self.max_videos)
        if not isinstance(checked, Success):
            return invalid(checked.failure())
        videos = checked.unwrap()
        created = raw not in self.collections
        self.collections[raw] = videos
        self.invalidate(raw)
        self.log.info(
            "collection.saved", request_id=request_id, collection=raw, videos=len(videos), created=created
        )
        answered = orjson.dumps({"videos": videos})
        if created:
            return 201, JSON, (("location", f"/collections/{raw}"),), answered
        return 200, JSON, (), answered


def _not_allowed(method: str, allowed: tuple[str, ...]) -> Reply:
    status, content_type, _, body = problem(
        405,
        "method-not-allowed",
        "Method not allowed",
        f"{method[:20]} is not allowed here; use {', '.join(allowed)}",
    )
    return status, content_type, (("allow", ", ".join(allowed)),), body


async def _open_session(settings: Settings) -> aiohttp.ClientSession:
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


app = Guarded(os.environ.get(_CACHE_ENV, "stats"))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m perf.guarded", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8094)
    parser.add_argument(
        "--cache", choices=CACHE_CHOICES, default="stats", help="the stats cache, as --cache of the service"
    )
    add_granian_arguments(parser)
    args = parser.parse_args(argv)
    if "YOUTUBE_API_URL" not in os.environ:
        parser.error("set YOUTUBE_API_URL (and YOUTUBE_API_KEY) to a videos.list server")
    os.environ[_CACHE_ENV] = args.cache
    serve("perf.guarded:app", args.host, args.port, granian_options(args))


if __name__ == "__main__":
    main()
