"""The API's request handling, independent of any server framework.

A server finds the request's ``Route`` in the route table (``bootstrap.edge.ROUTES``), wraps
what it received in an ``Incoming`` and writes the ``Reply`` that ``HttpApi.answer`` returns,
with the request id it returns beside it as ``X-Request-Id`` (``serve`` adds it for servers that
would rather not). ``answer`` is what every request goes through: request id, method and path
checks, write auth, the route's handler for the method (``handlers``), a 304 for a GET whose
If-None-Match names the answer's ETag (``conditional``), a bug stopped as a 500, request
metrics. Status codes and problem bodies come from ``problems``, so every server behaves
identically.
"""

from __future__ import annotations

import hmac
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from random import getrandbits as _random_bits
from typing import TYPE_CHECKING

import orjson

from influencer_stats.algebras import CollectionStatsQuery, CollectionStore, EventLog, Metrics
from influencer_stats.algebras.clients import CALLER, Caller
from influencer_stats.algebras.event_log import LOG_CONTEXT
from influencer_stats.algebras.metrics import RequestRecorder
from influencer_stats.algebras.tracing import RequestTracing
from influencer_stats.http import conditional, problems
from influencer_stats.http.body import BodyIncomplete
from influencer_stats.http.cors import Cors
from influencer_stats.http.encoding import Gzip
from influencer_stats.http.problems import Reply
from influencer_stats.http.route_table import bound

if TYPE_CHECKING:
    from influencer_stats.http.route_table import CollectionHooks, Forget, Handler, Route

MAX_BODY_BYTES = 1024 * 1024
#: Readiness checks by dependency name, built by the composition root.
Checks = dict[str, Callable[[], Awaitable[bool]]]
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_clock = time.perf_counter
#: A size no answer reaches: compression off.
_NEVER = 1 << 62
#: Methods that need the write token (when one is set), on whichever route answers them.
_WRITES = frozenset({"DELETE", "PATCH", "POST", "PUT"})
#: Methods whose tagged 200 becomes a 304 when If-None-Match names it (RFC 9110 13.1.2; to any
#: other method the field would be a precondition, 412, which no route here takes).
_CONDITIONAL = frozenset({"GET", "HEAD"})
#: The methods HTTP defines (RFC 9110, PATCH, WebDAV and the rest of the list llhttp parses).
#: uvicorn's and aiohttp's parsers refuse any other method with a 400 before an app runs; the
#: edge refuses it with a 400 too where a server lets it through (Granian takes any token), so
#: all four agree. A method in this set that a route does not answer is a 405 with Allow.
HTTP_METHODS = frozenset(
    {
        "ACL", "BIND", "CHECKOUT", "CONNECT", "COPY", "DELETE", "GET", "HEAD", "LINK", "LOCK",
        "M-SEARCH", "MERGE", "MKACTIVITY", "MKCALENDAR", "MKCOL", "MOVE", "NOTIFY", "OPTIONS",
        "PATCH", "POST", "PROPFIND", "PROPPATCH", "PURGE", "PUT", "QUERY", "REBIND", "REPORT",
        "SEARCH", "SOURCE", "SUBSCRIBE", "TRACE", "UNBIND", "UNLINK", "UNLOCK", "UNSUBSCRIBE",
    }
)  # fmt: skip

BodyReader = Callable[[int], Awaitable[bytes | None]]


async def no_body(_: int) -> bytes | None:
    """The ``BodyReader`` of a request without a body (or whose body no handler reads)."""
    return b""


@dataclass(slots=True)
class Incoming:
    """What a server hands over: the matched route and the request's parts.

    ``read_body(limit)`` returns the body, or None as soon as it exceeds ``limit`` bytes (servers
    build it on ``body.read_request_body``, so none ever buffers more than that), and raises
    ``BodyIncomplete`` when the client went away before the whole body arrived; ``collection_id``
    is percent-decoded, once split off the path as received (``RouteTable.match_raw``).
    ``query`` is the raw query string, without the ``?`` and not yet percent-decoded.
    """

    route: Route
    method: str
    collection_id: str = ""
    request_id: str | None = None
    #: Every Authorization field line received, joined with ", " (RFC 9110 5.3): two lines
    #: never authorize a write, whichever of them a framework would have picked.
    authorization: str | None = None
    read_body: BodyReader = no_body
    query: str = ""
    #: The W3C ``traceparent`` header; servers read it only when the API traces (``HttpApi.traced``).
    traceparent: str | None = None
    #: The Content-Type header (the first), for handlers that take only JSON (a slice's POST).
    content_type: str | None = None
    #: The address the request came from, and every X-Forwarded-For line joined (``Caller``).
    peer: str | None = None
    forwarded_for: str | None = None
    #: Every If-None-Match line, joined with ", " (a list header): a GET or HEAD whose tagged 200
    #: it names is answered 304 (``conditional``).
    if_none_match: str | None = None
    #: The Accept-Encoding header (the first): whether a large answer may be gzipped (``encoding``).
    accept_encoding: str | None = None
    #: The Origin and Access-Control-Request-Method headers; servers read them only when the API
    #: answers CORS (``HttpApi.cors``).
    origin: str | None = None
    cors_method: str | None = None


@dataclass(frozen=True, slots=True)
class _Plan:
    """One route's method as ``answer`` runs it, resolved once per ``HttpApi``: its handler, its
    request metrics with their labels, and whether it is a write."""

    handler: Handler
    record: RequestRecorder
    write: bool


#: The plans of a route, by method.
_Plans = dict[str, _Plan]


def _request_id(header: str | None) -> str:
    """The client's id when it is a sane one, else a new one."""
    return header if header is not None and _REQUEST_ID.fullmatch(header) else new_request_id()


def with_request_id(reply: Reply, request_id: str) -> Reply:
    """``reply`` with ``X-Request-Id: request_id`` last among its headers."""
    # Reply(...) directly: NamedTuple._replace costs twice as much, on every request.
    status, body, content_type, headers = reply
    return Reply(status, body, content_type, (*headers, ("x-request-id", request_id)))


def _method_label(method: str) -> str:
    """The method as a metrics label: one of a closed set."""
    return method if method in HTTP_METHODS else "other"


def _problem_of(reply: Reply) -> dict[str, object]:
    """The members of ``reply``'s problem document (empty for any other body)."""
    if reply.content_type != problems.PROBLEM_JSON:
        return {}
    document = orjson.loads(reply.body)
    return document if isinstance(document, dict) else {}


def new_request_id() -> str:
    """16 hex digits; unique enough to correlate logs, cheap (no syscall), not a secret."""
    return f"{_random_bits(64):016x}"


class HttpApi:
    """The service's HTTP behaviour, built from the algebras it needs.

    ``serve`` answers every request; the route's handler for the method (``handlers``;
    ``routes.CORE`` pairs them; a slice's take its part, ``parts``) reads what it needs from the
    attributes, and what slices add to ``/collections/{id}`` from ``collections``. With
    ``write_token`` set, PUT and DELETE need ``Authorization: Bearer <token>`` (constant-time
    compared), checked before the handler runs; reads stay open. With ``tracing``, each request
    is answered inside its span (the trace id bound to its log lines); without, ``serve`` is the
    plain path, with no layer added. Each 5xx answer and each refused write (a 4xx to PUT,
    DELETE, POST or PATCH) is a ``request.failed`` warning (``_failed``).
    """

    max_body_bytes = MAX_BODY_BYTES
    #: Answer one request (what servers call), with the request's id for them to add as
    #: ``X-Request-Id``: ``_answer``, or ``_traced_answer`` with tracing.
    answer: Callable[[Incoming], Awaitable[tuple[Reply, str]]]

    def __init__(
        self,
        store: CollectionStore,
        stats: CollectionStatsQuery,
        log: EventLog,
        metrics: Metrics,
        checks: Mapping[str, Callable[[], Awaitable[bool]]],
        *,
        write_token: str | None,
        max_videos: int,
        openapi: bytes,
        tracing: RequestTracing | None = None,
        parts: Mapping[str, object] | None = None,
        forgets: Sequence[Forget] = (),
        collections: Sequence[CollectionHooks] = (),
        gzip_min_bytes: int = 0,
        cors_origins: Sequence[str] = (),
        access_log: bool = False,
    ) -> None:
        self.store = store
        self.stats = stats
        self.log = log
        self.checks = dict(checks)
        self.metrics = metrics
        self.max_videos = max_videos
        self.parts = dict(parts or {})  # what each slice's routes take (``Route.part``), by name
        self.forgets = tuple(forgets)  # run in order by DELETE, before the store forgets it
        self.put_bodies = tuple(hooks.put for hooks in collections if hooks.put is not None)
        self.saving_ids = tuple(hooks.saving_ids for hooks in collections if hooks.saving_ids is not None)
        self.shown = tuple(hooks.shown for hooks in collections if hooks.shown is not None)
        self.deleted = tuple(hooks.deleted for hooks in collections if hooks.deleted is not None)
        #: Answers of at least ``gzip_min_bytes`` (0: none) are gzipped for clients that accept it,
        #: last before the server writes (``_answer``); the OpenAPI document compressed now, once.
        self._gzip = Gzip(gzip_min_bytes or _NEVER)
        self._gzip_min_bytes = self._gzip.min_bytes
        #: The OpenAPI document, as ``/openapi.json`` answers it.
        self.openapi = Reply(200, openapi)
        self._gzip.keep(openapi, now=True)
        self._cors = Cors(cors_origins) if cors_origins else None
        #: Whether servers should hand over ``Origin`` and ``Access-Control-Request-Method``.
        self.cors = self._cors is not None
        self._write_token = write_token.encode() if write_token else None
        self._tracing = tracing
        #: Whether servers should hand over the ``traceparent`` header (``Incoming.traceparent``).
        self.traced = tracing is not None
        #: Each route's plans (``_Plan``), built the first time the route is served.
        self._plans: dict[Route, _Plans] = {}
        # Chosen once: without tracing a request costs exactly what it did before tracing existed;
        # likewise CORS and the access log, each a layer around it only when on.
        answer = self._answer if tracing is None else self._traced_answer
        if self._cors is not None:
            self._inside_cors = answer
            answer = self._cors_answer
        self._access_log = access_log
        if access_log:
            self._unlogged = answer
            answer = self._logged_answer
        self.answer = answer

    def keep(self, reply: Reply) -> Reply:
        """``reply``, whose body is a constant of the process (a docs file): gzipped once, when first
        asked, then kept compressed."""
        self._gzip.keep(reply.body)
        return reply

    async def serve(self, incoming: Incoming) -> Reply:
        """``answer``, its request id added to the reply's headers (``X-Request-Id``)."""
        reply, request_id = await self.answer(incoming)
        return with_request_id(reply, request_id)

    async def _traced_answer(self, incoming: Incoming) -> tuple[Reply, str]:
        """``_answer`` inside the request's span, its trace id bound to the request's log lines."""
        assert self._tracing is not None
        with self._tracing.request(incoming.method, incoming.route.template, incoming.traceparent) as span:
            answered = await self._answer(incoming, span.trace_id)
            span.answered(answered[0].status)
            return answered

    async def _cors_answer(self, incoming: Incoming) -> tuple[Reply, str]:
        """The answer with the CORS headers for the request's origin, or a preflight's 204 (``cors``)."""
        cors, origin = self._cors, incoming.origin
        assert cors is not None
        if (
            origin is not None
            and incoming.cors_method is not None
            and incoming.method == "OPTIONS"
            and "OPTIONS" not in incoming.route.handlers
            and cors.allows(origin)
        ):
            started = _clock()
            request_id = _request_id(incoming.request_id)
            reply = cors.preflight(origin, incoming.route.methods)
            self.metrics.request(incoming.route.template, "OPTIONS", reply.status, _clock() - started)
            return reply, request_id
        reply, request_id = await self._inside_cors(incoming)
        return cors.answered(reply, origin), request_id

    async def _logged_answer(self, incoming: Incoming) -> tuple[Reply, str]:
        """The answer, then its ``http.access`` event (``access``)."""
        started = _clock()
        reply, request_id = await self._unlogged(incoming)
        self._access(request_id, incoming.method, incoming.route.template, reply, _clock() - started)
        return reply, request_id

    def _access(self, request_id: str, method: str, route: str, reply: Reply, seconds: float) -> None:
        """The access log's line for one answered request: through the process's log, at info, so
        a rate-limited logger drops (and counts) lines past its rate like any other event."""
        self.log.info(
            "http.access",
            request_id=request_id,
            method=_method_label(method),
            route=route,
            status=reply.status,
            bytes=len(reply.body),
            duration_ms=round(seconds * 1000, 3),
        )

    def _plan(self, route: Route) -> _Plans:
        # Per route and method, once: answer re-derives no label and looks up no handler per
        # request (perf/RESULTS.md, "The cached path by structure": serve's own 2.0 µs, 1.2 now).
        plans = {
            method: _Plan(
                handler if route.part is None else bound(handler, self.parts[route.part]),
                self.metrics.recorder(route.template, _method_label(method)),
                method in _WRITES,
            )
            for method, handler in route.handlers.items()
        }
        self._plans[route] = plans
        return plans

    async def _answer(self, incoming: Incoming, trace_id: str | None = None) -> tuple[Reply, str]:
        """Answer one request: bind its id (and trace id) to the logs, dispatch, count it."""
        started = _clock()
        request_id = _request_id(incoming.request_id)
        bound = LOG_CONTEXT.set(
            {"request_id": request_id}
            if trace_id is None
            else {"request_id": request_id, "trace_id": trace_id}
        )
        caller = CALLER.set(Caller(incoming.authorization, incoming.peer, incoming.forwarded_for))
        route, method = incoming.route, incoming.method
        plan = (self._plans.get(route) or self._plan(route)).get(method)
        try:
            if plan is None:  # no handler: the method is unknown, or the route does not answer it
                if method not in HTTP_METHODS:
                    reply = problems.unknown_method(method)
                elif not incoming.collection_id.isascii():
                    reply = problems.path_not_ascii()
                else:
                    reply = problems.method_not_allowed(method, route.methods)
            elif not incoming.collection_id.isascii():
                reply = problems.path_not_ascii()
            elif plan.write and (refusal := self._unauthorized(incoming.authorization)) is not None:
                reply = refusal
            else:
                reply = await plan.handler(self, incoming)
                if incoming.if_none_match is not None and method in _CONDITIONAL:
                    reply = conditional.not_modified(reply, incoming.if_none_match)
            # The status read once, for the metrics too: a 2xx costs one comparison more, no more.
            if (status := reply.status) >= 400 and (status >= 500 or method in _WRITES):
                self._failed(reply, route.template, method)
        except BodyIncomplete as exc:
            # The client went away mid-upload: its request, not a server error; nothing was stored.
            self.log.debug("http.body_incomplete", route=route.template, detail=str(exc))
            reply = problems.body_incomplete()
            status = reply.status
        except Exception as exc:  # noqa: BLE001 - the edge is where bugs stop
            error = problems.error_text(exc, incoming.authorization)
            self.log.error("http.unhandled_error", route=route.template, error=error)
            reply = problems.internal_error()
            status = reply.status
        finally:
            LOG_CONTEXT.reset(bound)
            CALLER.reset(caller)
        # Last, after the handler decided (a 304 included): a small answer pays this test only.
        if len(reply.body) >= self._gzip_min_bytes:
            reply = self._gzip.encode(reply, method, incoming.accept_encoding)
        if plan is None:
            self.metrics.request(route.template, _method_label(method), status, _clock() - started)
        else:
            plan.record(status, _clock() - started)
        return reply, request_id

    def unmatched(self, path: str, method: str, request_id: str | None) -> Reply:
        """The answer when no route matches ``path`` (percent-decoded), in the order parsers refuse:

        a method HTTP does not define, then a path outside ASCII, then the target ``*``
        with a method other than OPTIONS (all 400), else a 404.
        """
        if method not in HTTP_METHODS:
            reply = problems.unknown_method(method)
        elif not path.isascii():
            reply = problems.path_not_ascii()
        elif path == "*" and method != "OPTIONS":
            # RFC 9112 3.2.4: the asterisk-form is for OPTIONS only. aiohttp's parser refuses
            # `GET *` with a 400 before any app code runs; uvicorn and Granian pass it on.
            reply = problems.problem(400, "invalid-path", "Invalid path", "the target * is for OPTIONS only")
        else:
            reply = problems.route_not_found(path)
        return self.refuse(reply, "unmatched", method, request_id)

    def refuse(self, reply: Reply, route: str, method: str, request_id: str | None) -> Reply:
        """A server's own refusal (no route, wrong method) with the usual id and metrics.

        ``route`` is the metrics label: the template, or ``"unmatched"``.
        """
        self.metrics.request(route, _method_label(method), reply.status, 0.0)
        request_id = _request_id(request_id)
        if reply.status >= 500 or (reply.status >= 400 and method in _WRITES):
            self._failed(reply, route, method, request_id=request_id)
        if self._access_log:
            self._access(request_id, method, route, reply, 0.0)
        return with_request_id(reply, request_id)

    def _failed(self, reply: Reply, route: str, method: str, **fields: object) -> None:
        """A warning (``request.failed``) for a 5xx answer or a refused write, which otherwise no
        log line would tell of (a bug's 500 has its own, ``http.unhandled_error``): the status,
        the problem's type, and for a 5xx its detail (what failed: ``redis: ConnectionError``,
        written by the service, never the client's input). Through the process's log stack, so
        rate-limited like every event (``--logger dropping``)."""
        problem = _problem_of(reply)
        if reply.status >= 500:
            fields["detail"] = problem.get("detail")
        self.log.warning(
            "request.failed",
            status=reply.status,
            problem=problem.get("type"),
            route=route,
            method=_method_label(method),
            **fields,
        )

    def _unauthorized(self, authorization: str | None) -> Reply | None:
        if self._write_token is None:
            return None
        scheme, _, credentials = (authorization or "").partition(" ")
        credentials = credentials.strip()
        # ASCII only (a bearer token is): servers decode header bytes differently (latin-1,
        # UTF-8 with surrogate escapes), so anything else would compare differently per server.
        if (
            scheme.lower() == "bearer"
            and credentials.isascii()
            and hmac.compare_digest(credentials.encode(), self._write_token)
        ):
            return None
        return problems.problem(
            401,
            "unauthorized",
            "Unauthorized",
            "writes need the header Authorization: Bearer <token>",
            headers=(("www-authenticate", 'Bearer realm="influencer-stats"'),),
        )
