"""Slice ``tracing``: OpenTelemetry spans, exported over OTLP/HTTP (``--tracing otel``, the otel extra).

Its entry ``otel`` in the core's ``tracing`` slot builds the SDK's tracer provider here, the only
place that reads the standard ``OTEL_*`` variables (the SDK reads them as it is built:
``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_SERVICE_NAME``, ``OTEL_TRACES_SAMPLER`` …), with the
OTLP/HTTP exporter behind a ``BatchSpanProcessor``, flushed and shut down on exit within
``flush_budget_s`` (what is still unsent then is dropped: a collector down or silent must not
hold the stop). What it returns is a ``Tracing`` (``bootstrap/tracing.py``) whose every layer and
hook is one of ``interpreters/tracing``, around the tracer. Without this slice the slot keeps
``none``: nothing is traced, nothing is paid.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any, Final, cast

from influencer_stats.bootstrap.slices.slice import Slice
from influencer_stats.bootstrap.tracing import TRACING, Client, Tracing

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer

    from influencer_stats.algebras import CollectionStatsQuery, VideoStatsSource
    from influencer_stats.algebras.tracing import RequestTracing, Spans
    from influencer_stats.algebras.youtube import VideosListCall
    from influencer_stats.bootstrap.wiring import Resources
    from influencer_stats.settings import Settings

SLICE = Slice(
    "tracing",
    "OpenTelemetry spans over OTLP/HTTP (--tracing otel, the otel extra)",
    files=(
        "influencer_stats/interpreters/tracing",
        "tests/integration/test_tracing*.py",
        "tests/integration/tracing_support.py",
        "tests/unit/test_tracing_parts.py",
    ),
    modules=("influencer_stats.interpreters.tracing", "influencer_stats.bootstrap.slices.tracing"),
)

#: The service's name in traces unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) names it.
SERVICE_NAME = "influencer-stats"
#: The exporter's last flush at exit takes at most this long (less with a short graceful shutdown).
FLUSH_S: Final = 2.0
#: Where the otel extra comes from: the checkout (the package is not on the package index) or the image.
INSTALL_OTEL = (
    "make run EXTRAS=otel or pip install -e '.[otel]' in the checkout, docker build --build-arg EXTRAS=otel"
)


def flush_budget_s(settings: Settings) -> float:
    """How long the last flush may take: well inside the graceful shutdown, which it follows.

    The SDK's own bounds do not hold it: its shutdown waits 30 s for the batch thread, whose
    every batch waits the exporter's timeout (10 s; a silent collector answers never) or retries
    for it (a collector down); Granian kills a worker after the graceful shutdown, ``--workers``
    after it and ``CLEANUP_S``, ``docker stop`` after 10 s.
    """
    return min(FLUSH_S, settings.graceful_shutdown_s / 2)


async def shut_down_within(shutdown: Callable[[], object], seconds: float) -> None:
    """Run ``shutdown`` in a daemon thread of its own; wait for it ``seconds`` at most, off the loop.

    One it has not finished by then is left to the process's exit (a daemon thread holds none),
    and the loop's executor is not held either: it only waited on the join.
    """
    thread = threading.Thread(target=shutdown, name="otel-shutdown", daemon=True)
    thread.start()
    await asyncio.to_thread(thread.join, seconds)


def _importable(module: str) -> bool:
    """Whether ``module`` is installed; ``find_spec`` of a dotted name raises when a parent is missing."""
    try:
        return find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _sdk_installed(_: Settings) -> str | None:
    if not (_importable("opentelemetry.sdk") and _importable("opentelemetry.exporter.otlp.proto.http")):
        return f"needs the otel extra: {INSTALL_OTEL}"
    return None


class OtelTracing(Tracing):
    """Spans of ``tracer``: each place the root traces gets its layer of ``interpreters/tracing``,
    each client the hooks that send ``traceparent``."""

    __slots__ = ("_tracer",)

    def __init__(self, tracer: Tracer) -> None:
        self._tracer = tracer

    def requests(self) -> RequestTracing:
        from influencer_stats.interpreters.tracing.otel import OtelRequests

        return OtelRequests(self._tracer)

    def stats(self, stats: CollectionStatsQuery, *, cached: bool) -> CollectionStatsQuery:
        from influencer_stats.interpreters.tracing.otel import TracedStats

        return TracedStats(stats, self._tracer, cached=cached)  # a ``stats.query`` span

    def source(self, source: VideoStatsSource, *, cached: bool) -> VideoStatsSource:
        from influencer_stats.interpreters.tracing.otel import TracedSource

        return TracedSource(source, self._tracer, cached=cached)  # a ``videos.fetch`` span

    def call(self, call: VideosListCall) -> VideosListCall:
        from influencer_stats.interpreters.tracing.otel import TracedVideosList

        return TracedVideosList(call, self._tracer)  # a CLIENT span per call

    def spans(self) -> Spans:
        from influencer_stats.interpreters.tracing.otel import OtelSpans

        return OtelSpans(self._tracer)  # a slice's own spans (``sources.read``)

    def redis(self, client: Client) -> Client:
        from influencer_stats.interpreters.tracing.otel_redis import TracedRedis

        pool = cast(Any, client).connection_pool  # a redis-py ``Redis``: its pool, traced
        return cast(Client, TracedRedis(connection_pool=pool, tracer=self._tracer))

    def httpx_hooks(self) -> dict[str, list[Any]]:
        from influencer_stats.interpreters.tracing.otel_http import httpx_hooks

        return httpx_hooks()

    def aiohttp_trace_configs(self) -> list[Any]:
        from influencer_stats.interpreters.tracing.otel_http import aiohttp_trace_configs

        return aiohttp_trace_configs()


@TRACING.add(
    "otel",
    "OpenTelemetry spans over OTLP/HTTP, set up by the OTEL_* variables (the otel extra)",
    check=_sdk_installed,
    needs=("otlp",),
)
async def _otel(resources: Resources) -> Tracing:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME as NAME
    from opentelemetry.sdk.resources import SERVICE_VERSION, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from influencer_stats.version import version

    described = Resource.create({SERVICE_VERSION: version()})  # + OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
    if str(described.attributes.get(NAME, "")).startswith("unknown_service"):
        described = described.merge(Resource({NAME: SERVICE_NAME}))
    provider = TracerProvider(resource=described, shutdown_on_exit=False)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    # Off the loop: the last export blocks (and a receiver may be served by this very loop).
    resources.exits.push_async_callback(
        shut_down_within, provider.shutdown, flush_budget_s(resources.settings)
    )
    return OtelTracing(provider.get_tracer("influencer_stats", version()))
