"""The layers ``HttpApi`` folds around its answer only when they are on, so that a service without
them answers with no layer added: CORS (``INFLUENCER_STATS_CORS_ORIGINS``) and the access log
(``INFLUENCER_STATS_ACCESS_LOG``). Each takes the answer inside it and is one itself."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from influencer_stats.algebras import EventLog, Metrics
from influencer_stats.http.cors import Cors
from influencer_stats.http.incoming import Incoming, method_label, request_id_of
from influencer_stats.http.problems import Reply

#: An answer to one request, with the request's id (``HttpApi.answer``).
Answer = Callable[[Incoming], Awaitable[tuple[Reply, str]]]
_clock = time.perf_counter


class CorsAnswer:
    """The answer with the CORS headers for the request's origin, or a preflight's 204 (``cors``)."""

    def __init__(self, inner: Answer, cors: Cors, metrics: Metrics) -> None:
        self._inner, self._cors, self._metrics = inner, cors, metrics

    async def __call__(self, incoming: Incoming) -> tuple[Reply, str]:
        cors, origin = self._cors, incoming.origin
        if (
            origin is not None
            and incoming.cors_method is not None
            and incoming.method == "OPTIONS"
            and "OPTIONS" not in incoming.route.handlers
            and cors.allows(origin)
        ):
            started = _clock()
            request_id = request_id_of(incoming.request_id)
            reply = cors.preflight(origin, incoming.route.methods)
            self._metrics.request(incoming.route.template, "OPTIONS", reply.status, _clock() - started)
            return reply, request_id
        reply, request_id = await self._inner(incoming)
        return cors.answered(reply, origin), request_id


class AccessLogged:
    """The answer, then its ``http.access`` event: through the process's log, at info, so a
    rate-limited logger drops (and counts) lines past its rate like any other event."""

    def __init__(self, inner: Answer, log: EventLog) -> None:
        self._inner, self._log = inner, log

    async def __call__(self, incoming: Incoming) -> tuple[Reply, str]:
        started = _clock()
        reply, request_id = await self._inner(incoming)
        log_access(self._log, request_id, incoming.method, incoming.route.template, reply, _clock() - started)
        return reply, request_id


def log_access(log: EventLog, request_id: str, method: str, route: str, reply: Reply, seconds: float) -> None:
    """The access log's line for one answered request (a refusal without a route too)."""
    log.info(
        "http.access",
        request_id=request_id,
        method=method_label(method),
        route=route,
        status=reply.status,
        bytes=len(reply.body),
        duration_ms=round(seconds * 1000, 3),
    )
