"""The access log (the ``access_log`` slice): one ``http.access`` event per request, through the
process's log, at info, so a rate-limited logger drops (and counts) lines past its rate like any
other event. Its layer is outermost: it sees every answer, a preflight's and a refusal's too."""

from __future__ import annotations

import time

from influencer_stats.algebras import EventLog
from influencer_stats.http.incoming import Incoming, method_label
from influencer_stats.http.layers import Answer, EdgeLayer
from influencer_stats.http.problems import Reply

_clock = time.perf_counter


class AccessLogged:
    """The answer, then its ``http.access`` event."""

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


def access_log_layer(log: EventLog) -> EdgeLayer:
    """The layer that logs each answer, and each refusal no answer saw, to ``log``."""

    def refused(request_id: str, method: str, route: str, reply: Reply) -> None:
        log_access(log, request_id, method, route, reply, 0.0)

    return EdgeLayer(lambda inner: AccessLogged(inner, log), refused)
