"""OpenTelemetry spans: the request (``RequestTracing``), and wrappers of the stats query, the
video source and the single ``videos.list`` call.

Every class here gets a built ``Tracer`` (the root configures the SDK, its exporter and the
``OTEL_*`` variables); none reads the environment. Spans nest through OpenTelemetry's context
(a ``contextvars`` value), so a wrapper's span is the parent of whatever its inner layer opens.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from opentelemetry.trace import Span, SpanKind, StatusCode, Tracer, format_trace_id
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from returns.result import Failure, Result, Success

from influencer_stats.algebras import CollectionStatsQuery, VideoStatsSource
from influencer_stats.algebras.youtube import VideosListCall
from influencer_stats.domain.models import (
    CacheInfo,
    CollectionId,
    StatsAnswer,
    StatsByVideo,
    StatsError,
    UpstreamError,
    VideoBatch,
    VideoId,
)

#: W3C Trace Context, the only propagation the service speaks (``traceparent``, ``tracestate``).
PROPAGATOR = TraceContextTextMapPropagator()
#: Calls made per chunk of ids during one traced fetch (a retry calls with the same ids again).
_ATTEMPTS: ContextVar[dict[tuple[VideoId, ...], int] | None] = ContextVar(
    "videos_list_attempts", default=None
)


class _RequestSpan:
    __slots__ = ("_span",)

    def __init__(self, span: Span) -> None:
        self._span = span

    @property
    def trace_id(self) -> str:
        return format_trace_id(self._span.get_span_context().trace_id)

    def answered(self, status: int) -> None:
        self._span.set_attribute("http.response.status_code", status)
        if status >= 500:
            self._span.set_status(StatusCode.ERROR)


class OtelRequests:
    """``RequestTracing`` on an OpenTelemetry tracer: one SERVER span per request, named
    ``<METHOD> <route template>``, child of the request's ``traceparent`` when it is valid."""

    def __init__(self, tracer: Tracer) -> None:
        self._tracer = tracer

    @contextmanager
    def request(self, method: str, route: str, traceparent: str | None) -> Iterator[_RequestSpan]:
        parent = PROPAGATOR.extract({"traceparent": traceparent}) if traceparent else None
        with self._tracer.start_as_current_span(
            f"{method} {route}",
            context=parent,
            kind=SpanKind.SERVER,
            attributes={"http.request.method": method, "http.route": route},
        ) as span:
            yield _RequestSpan(span)


def cache_decision(cache: CacheInfo | None) -> dict[str, str | float]:
    """How a cache answered, as span attributes: ``cache.result`` is hit, stale or miss."""
    if cache is None or not cache.hit:
        return {"cache.result": "miss"}
    stale = cache.ttl_s < 0 or cache.stale_reason is not None
    decision: dict[str, str | float] = {
        "cache.result": "stale" if stale else "hit",
        "cache.age_s": cache.age_s,
    }
    if cache.stale_reason is not None:
        decision["cache.stale_reason"] = cache.stale_reason
    return decision


def _failed(span: Span, error: object) -> None:
    span.set_status(StatusCode.ERROR, getattr(error, "detail", None))
    span.set_attribute("error.type", type(error).__name__)


class TracedStats:
    """``CollectionStatsQuery`` wrapper: a ``stats.query`` span per call, with the collection,
    the videos and, when ``cached`` (a cache serves the answers), the cache's decision."""

    def __init__(self, inner: CollectionStatsQuery, tracer: Tracer, *, cached: bool) -> None:
        self._inner = inner
        self._tracer = tracer
        self._cached = cached

    async def stats(self, collection_id: CollectionId) -> Result[StatsAnswer, StatsError]:
        with self._tracer.start_as_current_span(
            "stats.query", attributes={"collection.id": collection_id}
        ) as span:
            answer = await self._inner.stats(collection_id)
            if isinstance(answer, Success):
                found = answer.unwrap()
                span.set_attribute("collection.videos", found.stats.videos)
                if self._cached:
                    span.set_attributes(cache_decision(found.cache))
            else:
                _failed(span, answer.failure())
            return answer

    async def invalidate(self, collection_id: CollectionId) -> None:
        with self._tracer.start_as_current_span(
            "stats.invalidate", attributes={"collection.id": collection_id}
        ):
            await self._inner.invalidate(collection_id)


class OtelSpans:
    """``Spans``: the internal spans a slice opens around its own calls (``sources.read``)."""

    def __init__(self, tracer: Tracer) -> None:
        self._tracer = tracer

    @contextmanager
    def span(self, name: str, attributes: Mapping[str, str | int]) -> Iterator[NotedSpan]:
        with self._tracer.start_as_current_span(name, attributes=dict(attributes)) as span:
            yield NotedSpan(span)


class NotedSpan:
    """``Span`` over an OpenTelemetry span."""

    __slots__ = ("_span",)

    def __init__(self, span: Span) -> None:
        self._span = span

    def note(self, name: str, value: str | int) -> None:
        self._span.set_attribute(name, value)

    def failed(self, error: object) -> None:
        _failed(self._span, error)


class TracedSource:
    """``VideoStatsSource`` wrapper: a ``videos.fetch`` span per fetch, with the ids asked for,
    those missing, the ``videos.list`` calls and retries made for it, and, when ``cached`` (a
    per-video cache is inside), the cache's decision."""

    def __init__(self, inner: VideoStatsSource, tracer: Tracer, *, cached: bool) -> None:
        self._inner = inner
        self._tracer = tracer
        self._cached = cached

    async def fetch(self, ids: Sequence[VideoId]) -> Result[VideoBatch, UpstreamError]:
        attempts: dict[tuple[VideoId, ...], int] = {}
        counting = _ATTEMPTS.set(attempts)
        try:
            with self._tracer.start_as_current_span(
                "videos.fetch", attributes={"videos.ids": len(ids)}
            ) as span:
                result = await self._inner.fetch(ids)
                calls = sum(attempts.values())
                span.set_attributes({"youtube.calls": calls, "youtube.retries": calls - len(attempts)})
                if isinstance(result, Success):
                    batch = result.unwrap()
                    span.set_attribute("videos.missing", len(batch.missing))
                    if self._cached:
                        span.set_attributes(cache_decision(batch.cache))
                else:
                    _failed(span, result.failure())
                return result
        finally:
            _ATTEMPTS.reset(counting)


class TracedVideosList:
    """``VideosListCall`` wrapper, last before the network: a CLIENT span ``youtube.videos.list``
    per call sent, with the ids, the quota units it costs (one), its attempt (a ``retry`` event
    from the second on) and what it found; the clients' hooks (``otel_clients``) put the span's
    ``traceparent`` on the request."""

    def __init__(self, inner: VideosListCall, tracer: Tracer) -> None:
        self._inner = inner
        self._tracer = tracer

    async def __call__(self, ids: Sequence[VideoId]) -> Result[StatsByVideo, UpstreamError]:
        attempt = 1
        attempts = _ATTEMPTS.get()
        if attempts is not None:
            key = tuple(ids)
            attempt = attempts[key] = attempts.get(key, 0) + 1
        with self._tracer.start_as_current_span(
            "youtube.videos.list",
            kind=SpanKind.CLIENT,
            attributes={"youtube.ids": len(ids), "youtube.quota_units": 1, "youtube.attempt": attempt},
        ) as span:
            if attempt > 1:
                span.add_event("retry", {"youtube.attempt": attempt})
            result = await self._inner(ids)
            if isinstance(result, Failure):
                _failed(span, result.failure())
            else:
                span.set_attribute("youtube.found", len(result.unwrap()))
            return result
