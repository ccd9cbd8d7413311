"""The service written by hand, keeping what ``fast`` guarantees: the lab's ``guarded`` reference.

:mod:`perf.minimal` is the floor (the same answer with no guarantee at all); this is
the same service with, on the measured path, what the ``fast`` profile keeps there,
written without the architecture (no algebras, wrappers, ``Result`` plumbing, route
table or ``HttpApi``): one class whose ``__rsgi__`` answers each request.

Its concerns are grouped in three modules, plain code calling each other with no layer between:
this one is the app (``__rsgi__`` and its routes, the stats cache, the computed stats, the log
lines, the launch); :mod:`perf.guarded_answers` writes the service's answers and metrics;
:mod:`perf.guarded_videos` makes the videos.list calls (a base class of :class:`Guarded`).

What it keeps:

- Collection ids: the service's rules (:func:`influencer_stats.domain.validation.parse_collection_id`,
  shared, not copied); a path outside ASCII is a 400, an invalid id a 422, an unknown
  collection a 404, each an RFC 9457 problem (``application/problem+json``) with the
  service's bytes.
- ``X-Request-Id``: a sane client id echoed, else 16 new hex digits, on every answer; ``ETag``/304.
- The stats cache (``--cache stats``, as ``fast``): fresh for ``INFLUENCER_STATS_CACHE_TTL``,
  then served stale while one refresh runs, stale-if-error, LRU bound, single flight per
  collection, dropped by a write (a computation that started before it stores nothing);
  ``Cache-Status`` and ``Age`` rendered as the service renders them (kept per entry while
  their whole seconds do not change). ``--cache none``: computed on every request.
- Metrics, recorded as ``fast`` records them (:mod:`perf.guarded_answers`): the requests
  counter and latency histogram (the service's buckets), the stats-cache events, the
  videos.list calls and their latency; ``GET /metrics`` renders them.
- The video fetch as the ``aiohttp-batched`` client makes it (:mod:`perf.guarded_videos`):
  each call within the call timeout, the fetch within the deadline, the answer checked by the
  service's wire format; a failure is the service's 502/503/504 problem.
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
import sys
import time
from collections import OrderedDict
from collections.abc import Sequence
from random import getrandbits
from typing import TYPE_CHECKING, Final

import orjson
from returns.result import Success

from influencer_stats.domain.models import CollectionId, CollectionNotFound, UpstreamError, VideoId
from influencer_stats.domain.validation import parse_collection_body, parse_collection_id
from influencer_stats.interpreters.logging.dropping import DroppingEventLog
from influencer_stats.interpreters.logging.structlog_json import StructlogEventLog
from influencer_stats.interpreters.youtube.youtube_api import API_KEY_HEADER
from perf.guarded_answers import (
    COLLECTION_ROUTE,
    JSON,
    MAX_REQUEST_BODY,
    METHOD_LABELS,
    NOT_ASCII,
    REQUEST_ID,
    STATS_ROUTE,
    UNMATCHED,
    Entry,
    Metrics,
    Reply,
    failed,
    head,
    invalid,
    not_allowed,
    ok,
    problem,
    revalidated,
)
from perf.guarded_videos import GuardedVideos, open_session
from perf.rsgi_ceiling import add_granian_arguments, granian_options, serve

if TYPE_CHECKING:
    from granian._granian import RSGIHTTPProtocol as HTTPProtocol
    from granian.rsgi import Scope

CACHE_CHOICES: Final = ("stats", "none")
_CACHE_ENV: Final = "PERF_GUARDED_CACHE"  # --cache, for the worker processes that import this
_PREFIX: Final = "/collections/"
_STATS_SUFFIX: Final = "/stats"
_MISS: Final = ("cache-status", "influencer-stats; fwd=miss; stored")
_EMPTY_BODY: Final = b'{"impressions":0,"engagements":0,"score":0,"videos":0,"missing":[]}'
_HEALTHY: Final = b'{"status":"ok"}'


class Guarded(GuardedVideos):
    """The RSGI app. Granian calls ``__rsgi_init__`` in its worker before serving, ``__rsgi_del__`` after.

    ``fetch``, ``call`` and ``videos_list`` (the videos.list calls) are :class:`GuardedVideos`'.
    """

    def __init__(self, cache: str) -> None:
        self.cached = cache == "stats"
        self.collections: dict[str, tuple[VideoId, ...]] = {}
        self.entries: OrderedDict[str, Entry] = OrderedDict()
        self.flights: dict[str, asyncio.Task[bytes | CollectionNotFound | UpstreamError]] = {}
        self.writes: dict[str, int] = {}  # writes per collection: a computation older than one stores nothing
        self.metrics = Metrics()
        #: Chosen once: a stats request calls one or the other, never asks which.
        self.stats_for = self.cached_stats if self.cached else self.stats
        self.session = None  # opened by __rsgi_init__ (GuardedVideos declares it)
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
        self.session = loop.run_until_complete(open_session(settings))

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
        if_none_match = scope.headers.get("if-none-match")
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
                if if_none_match is not None:
                    reply = revalidated(reply, if_none_match)
                self.metrics.request(STATS_ROUTE, method, reply[0], time.perf_counter() - started)
                status, content_type, headers, body = reply
                answer_headers = [("content-type", content_type), *headers, ("x-request-id", request_id)]
                if status == 304:  # without Content-Type, as the service writes it
                    answer_headers = head(reply, request_id)
                proto.response_bytes(status, answer_headers, b"" if method == "HEAD" else body)
                return
        route, reply = await self.elsewhere(method, path, proto, request_id)
        reply = revalidated(reply, if_none_match, method)
        label = method if method in METHOD_LABELS else "other"  # clients choose methods: a closed set
        self.metrics.request(route, label, reply[0], time.perf_counter() - started)
        proto.response_bytes(reply[0], head(reply, request_id), b"" if method == "HEAD" else reply[3])

    # --- GET /collections/{id}/stats ------------------------------------------------------------

    async def stats(self, collection_id: str, request_id: str) -> Reply:
        """Without a cache: computed now, no cache headers."""
        outcome = await self.computed(collection_id, request_id)
        if isinstance(outcome, bytes):
            return ok(outcome)
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
            return ok(outcome, _MISS)
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

    # --- everything else: not measured ------------------------------------------------------------

    async def elsewhere(
        self, method: str, path: str, proto: HTTPProtocol, request_id: str
    ) -> tuple[str, Reply]:
        """``/healthz``, ``/metrics``, ``GET``/``PUT /collections/{id}``; other paths 404, other methods 405."""
        if path == "/healthz" or path == "/metrics":
            if method not in ("GET", "HEAD"):
                return path, not_allowed(method, ("GET", "HEAD"))
            if path == "/healthz":
                return path, (200, JSON, (), _HEALTHY)
            return path, (200, "text/plain; version=0.0.4; charset=utf-8", (), self.metrics.render())
        raw = path[len(_PREFIX) :] if path.startswith(_PREFIX) else ""
        if not raw or "/" in raw:
            if raw.endswith(_STATS_SUFFIX) and raw[: -len(_STATS_SUFFIX)] and raw.count("/") == 1:
                return STATS_ROUTE, not_allowed(method, ("GET", "HEAD"))
            return UNMATCHED, problem(404, "route-not-found", "Not found", f"no route matches {path[:200]!r}")
        if method not in ("GET", "HEAD", "PUT"):
            return COLLECTION_ROUTE, not_allowed(method, ("GET", "HEAD", "PUT"))
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
        return COLLECTION_ROUTE, ok(orjson.dumps({"videos": videos}))

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
