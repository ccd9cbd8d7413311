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
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import orjson

from influencer_stats.algebras import CollectionStatsQuery, CollectionStore, EventLog, Metrics
from influencer_stats.algebras.clients import CALLER, Caller
from influencer_stats.algebras.event_log import LOG_CONTEXT
from influencer_stats.algebras.metrics import RequestRecorder
from influencer_stats.algebras.tracing import RequestTracing
from influencer_stats.http import conditional, problems
from influencer_stats.http.body import BodyIncomplete
from influencer_stats.http.encoding import Gzip
from influencer_stats.http.incoming import (
    HTTP_METHODS,
    Incoming,
    method_label,
    request_id_of,
    with_request_id,
)
from influencer_stats.http.layers import Answer, EdgeLayer
from influencer_stats.http.problems import Reply
from influencer_stats.http.route_table import bound

if TYPE_CHECKING:
    from influencer_stats.http.route_table import CollectionHooks, Forget, Handler, Route

MAX_BODY_BYTES = 1024 * 1024
#: Readiness checks by dependency name, built by the composition root.
Checks = dict[str, Callable[[], Awaitable[bool]]]
_clock = time.perf_counter
#: A size no answer reaches: compression off.
_NEVER = 1 << 62
#: Methods that need the write token (when one is set), on whichever route answers them.
_WRITES = frozenset({"DELETE", "PATCH", "POST", "PUT"})
#: Methods whose tagged 200 becomes a 304 when If-None-Match names it (RFC 9110 13.1.2; to any
#: other method the field would be a precondition, 412, which no route here takes).
_CONDITIONAL = frozenset({"GET", "HEAD"})


@dataclass(frozen=True, slots=True)
class _Plan:
    """One route's method as ``answer`` runs it, resolved once per ``HttpApi``: its handler, its
    request metrics with their labels, and whether it is a write."""

    handler: Handler
    record: RequestRecorder
    write: bool


#: The plans of a route, by method.
_Plans = dict[str, _Plan]


def _problem_of(reply: Reply) -> dict[str, object]:
    """The members of ``reply``'s problem document (empty for any other body)."""
    if reply.content_type != problems.PROBLEM_JSON:
        return {}
    document = orjson.loads(reply.body)
    return document if isinstance(document, dict) else {}


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
    answer: Answer

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
        layers: Sequence[EdgeLayer] = (),
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
        #: Whether servers should hand over ``Origin`` and ``Access-Control-Request-Method``.
        self.cors = any(layer.reads_origin for layer in layers)
        self._write_token = write_token.encode() if write_token else None
        self._tracing = tracing
        #: Whether servers should hand over the ``traceparent`` header (``Incoming.traceparent``).
        self.traced = tracing is not None
        #: Each route's plans (``_Plan``), built the first time the route is served.
        self._plans: dict[Route, _Plans] = {}
        # Chosen once: without tracing a request costs exactly what it did before tracing existed;
        # likewise the layers of slices (CORS, the access log), folded around it only while on.
        answer: Answer = self._answer if tracing is None else self._traced_answer
        for layer in reversed(layers):  # outermost first
            answer = layer.wrap(answer)
        self._refused = tuple(layer.refused for layer in layers if layer.refused is not None)
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

    def _plan(self, route: Route) -> _Plans:
        # Per route and method, once: answer re-derives no label and looks up no handler per
        # request (perf/RESULTS.md, "The cached path by structure": serve's own 2.0 µs, 1.2 now).
        plans = {
            method: _Plan(
                handler if route.part is None else bound(handler, self.parts[route.part]),
                self.metrics.recorder(route.template, method_label(method)),
                method in _WRITES,
            )
            for method, handler in route.handlers.items()
        }
        self._plans[route] = plans
        return plans

    async def _answer(self, incoming: Incoming, trace_id: str | None = None) -> tuple[Reply, str]:
        """Answer one request: bind its id (and trace id) to the logs, dispatch, count it."""
        started = _clock()
        request_id = request_id_of(incoming.request_id)
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
                    reply = self._revalidated(reply, incoming.if_none_match, incoming)
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
            self.metrics.request(route.template, method_label(method), status, _clock() - started)
        else:
            plan.record(status, _clock() - started)
        return reply, request_id

    def _revalidated(self, reply: Reply, if_none_match: str, incoming: Incoming) -> Reply:
        """A 304 in place of the 200 ``reply`` when ``if_none_match`` names it (``conditional``),
        with the Vary and the tag it would have been sent with (``Gzip.stand_in``); else ``reply``."""
        unchanged = conditional.not_modified(reply, if_none_match)
        if unchanged is reply or len(reply.body) < self._gzip_min_bytes:
            return unchanged
        return self._gzip.stand_in(reply, unchanged, incoming.method, incoming.accept_encoding)

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
        self.metrics.request(route, method_label(method), reply.status, 0.0)
        request_id = request_id_of(request_id)
        if reply.status >= 500 or (reply.status >= 400 and method in _WRITES):
            self._failed(reply, route, method, request_id=request_id)
        for refused in self._refused:
            refused(request_id, method, route, reply)
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
            method=method_label(method),
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
