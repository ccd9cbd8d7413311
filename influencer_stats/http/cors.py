"""CORS (the Fetch standard's cross-origin protocol) for the origins the service allows.

The ``cors`` slice, off unless origins are given (``INFLUENCER_STATS_CORS_ORIGINS``): without,
``HttpApi`` has no CORS layer and answers exactly as before (an OPTIONS is a 405 with ``Allow``). With origins:

- a preflight (``OPTIONS`` with ``Origin`` and ``Access-Control-Request-Method``) from an allowed
  origin, on a route, is a 204 with ``Access-Control-Allow-Origin``, ``-Allow-Methods`` (the
  route's), ``-Allow-Headers`` (what a client of this API sends) and ``-Max-Age``; from any other
  origin it is the OPTIONS it would be without CORS (a 405), with no CORS header;
- every other answer to an allowed origin carries ``Access-Control-Allow-Origin`` and
  ``Access-Control-Expose-Headers`` (the headers a script may read besides the simple ones);
- every answer says ``Vary: Origin`` unless every origin is allowed (``*``: the same answer for
  all). No credentials mode: a bearer token travels in ``Authorization``, which a preflight
  allows explicitly, never in cookies.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from influencer_stats.algebras import Metrics
from influencer_stats.http.encoding import with_vary
from influencer_stats.http.incoming import Incoming, request_id_of
from influencer_stats.http.layers import Answer, EdgeLayer
from influencer_stats.http.problems import Reply

#: What a client of this API sends beyond the CORS-safelisted headers.
ALLOW_HEADERS = "authorization, content-type, if-none-match, traceparent, x-request-id"
#: What a script may read beyond the CORS-safelisted response headers.
EXPOSE_HEADERS = "x-request-id, etag, link, retry-after, location, cache-status, age"
#: Seconds a browser may reuse a preflight's answer (Chromium caps it at 7,200).
MAX_AGE_S = 600
ANY = "*"


class Cors:
    """The CORS answers for ``origins`` (``("*",)``: every origin)."""

    def __init__(self, origins: Sequence[str]) -> None:
        self.any = ANY in origins
        self._origins = frozenset(origins)

    def allows(self, origin: str) -> bool:
        return self.any or origin in self._origins

    def _allow_origin(self, origin: str) -> tuple[str, str]:
        return ("access-control-allow-origin", ANY if self.any else origin)

    def preflight(self, origin: str, methods: Sequence[str]) -> Reply:
        """The 204 to a preflight from ``origin`` (allowed) on a route answering ``methods``."""
        headers: tuple[tuple[str, str], ...] = (
            self._allow_origin(origin),
            ("access-control-allow-methods", ", ".join(methods)),
            ("access-control-allow-headers", ALLOW_HEADERS),
            ("access-control-max-age", str(MAX_AGE_S)),
        )
        return Reply(204, b"", headers=headers if self.any else (*headers, ("vary", "origin")))

    def answered(self, reply: Reply, origin: str | None) -> Reply:
        """``reply`` with the CORS headers for ``origin`` (None: the request named none)."""
        status, body, content_type, headers = reply
        if origin is not None and self.allows(origin):
            headers = (
                *headers,
                self._allow_origin(origin),
                ("access-control-expose-headers", EXPOSE_HEADERS),
            )
        elif self.any:
            return reply
        return Reply(status, body, content_type, headers if self.any else with_vary(headers, "origin"))


def parse_origins(text: str) -> tuple[str, ...]:
    """The origins of a comma list as the setting gives them (validated there), lower-cased."""
    return tuple(dict.fromkeys(item.strip().lower() for item in text.split(",") if item.strip()))


class CorsAnswer:
    """The answer with the CORS headers for the request's origin, or a preflight's 204."""

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
            started = time.perf_counter()
            request_id = request_id_of(incoming.request_id)
            reply = cors.preflight(origin, incoming.route.methods)
            self._metrics.request(
                incoming.route.template, "OPTIONS", reply.status, time.perf_counter() - started
            )
            return reply, request_id
        reply, request_id = await self._inner(incoming)
        return cors.answered(reply, origin), request_id


def cors_layer(origins: Sequence[str], metrics: Metrics) -> EdgeLayer:
    """The CORS layer for ``origins`` (``("*",)``: every origin); its preflights counted in ``metrics``."""
    cors = Cors(origins)
    return EdgeLayer(lambda inner: CorsAnswer(inner, cors, metrics), reads_origin=True)
