"""The ``guarded`` reference's answers: the service's rules and renderings, written by hand.

One of the three parts of :mod:`perf.guarded` (the app), grouped by concern: here, what an
answer looks like as the service writes it (request ids, route and method labels, the body
limit, RFC 9457 problems, a cached entry's ``ETag``, ``Cache-Status`` and ``Age`` and the 304 for
a client holding its tag, the Prometheus series);
:mod:`perf.guarded_videos` makes the videos.list calls. tests/unit/test_perf_guarded.py
compares each of these with the service's own code, byte for byte.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import Final

import orjson

from influencer_stats.domain.models import (
    CollectionNotFound,
    InvalidUpstreamData,
    QuotaExceeded,
    UpstreamError,
    UpstreamMisconfigured,
    UpstreamTimeout,
)
from influencer_stats.domain.validation import InvalidInput
from influencer_stats.http.conditional import etag_of, names

#: The service's metric names and latency buckets, as its ``prometheus`` slice writes them
#: (tests/unit/test_prometheus_guarded.py compares; without the slice ``fast`` records none).
REQUESTS: Final = "influencer_stats_http_requests"
LATENCY: Final = "influencer_stats_http_request_duration_seconds"
UPSTREAM: Final = "influencer_stats_upstream_calls"
UPSTREAM_LATENCY: Final = "influencer_stats_upstream_call_duration_seconds"
CACHE: Final = "influencer_stats_cache_events"
LATENCY_BUCKETS: Final = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
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
#: The service's ``method`` label values besides ``other`` (``interpreters.metrics.prometheus``).
METHOD_LABELS: Final = frozenset(
    {"CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE"}
)

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

    __slots__ = ("body", "etag", "headers", "seconds", "stored_at")

    def __init__(self, body: bytes, stored_at: float) -> None:
        self.body = body
        self.etag = tagged(body)
        self.stored_at = stored_at
        self.seconds: tuple[int, int, str | None] | None = None
        self.headers: tuple[tuple[str, str], ...] = ()

    def reply(self, ttl_left: float, age: float, stale: str | None) -> Reply:
        """200 with its ``ETag``, ``Cache-Status`` and ``Age`` in whole seconds, rendered once per change."""
        seconds = (int(ttl_left), int(age), stale)
        if seconds != self.seconds:
            status = f"influencer-stats; hit; ttl={seconds[0]}" + (
                "" if stale is None else f"; detail={stale}"
            )
            self.headers = (self.etag, ("cache-status", status), ("age", str(seconds[1])))
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


def tagged(body: bytes) -> tuple[str, str]:
    """The ``ETag`` header of ``body``, the service's (``http.conditional.etag_of``, shared)."""
    return "etag", etag_of(body)


#: The headers a 304 keeps of the 200 (the service's ``http.conditional._KEPT``, of those it sends).
_KEPT_ON_304: Final = frozenset({"etag", "cache-status", "age"})


def ok(body: bytes, *headers: tuple[str, str]) -> Reply:
    """200 with ``body`` (JSON), its ``ETag`` first among its headers, as the service answers."""
    return 200, JSON, (tagged(body), *headers), body


def head(reply: Reply, request_id: str) -> list[tuple[str, str]]:
    """The headers of ``reply`` as the service writes them: no Content-Type on a 304, the id last."""
    status, content_type, headers, _ = reply
    if status == 304:
        return [*headers, ("x-request-id", request_id)]
    return [("content-type", content_type), *headers, ("x-request-id", request_id)]


def revalidated(reply: Reply, if_none_match: str | None, method: str = "GET") -> Reply:
    """A 304 for a GET's 200 whose tag (first of its headers) ``If-None-Match`` names, as the
    service answers it (``http.conditional.names``, shared); any other reply as it is."""
    status, _, headers, _ = reply
    if if_none_match is None or method not in ("GET", "HEAD"):
        return reply
    if status != 200 or not headers or headers[0][0] != "etag" or not names(if_none_match, headers[0][1]):
        return reply
    return 304, "", tuple(header for header in headers if header[0] in _KEPT_ON_304), b""


def not_allowed(method: str, allowed: tuple[str, ...]) -> Reply:
    """405 with the ``Allow`` header, as the service answers a method a route does not take."""
    status, content_type, _, body = problem(
        405,
        "method-not-allowed",
        "Method not allowed",
        f"{method[:20]} is not allowed here; use {', '.join(allowed)}",
    )
    return status, content_type, (("allow", ", ".join(allowed)),), body
