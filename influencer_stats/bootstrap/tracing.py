"""The ``tracing`` slot: OpenTelemetry spans, exported over OTLP/HTTP, or none at all.

With ``none`` (the default) no traced layer is built: the edge serves without a request span and
every stack is what it would be without this module. With ``otel`` the root builds the SDK's
tracer provider here, the only place that reads the standard ``OTEL_*`` variables (the SDK reads
them as it is built: ``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_SERVICE_NAME``, ``OTEL_TRACES_SAMPLER``
…), with the OTLP/HTTP exporter behind a ``BatchSpanProcessor``, flushed and shut down on exit
within ``flush_budget_s`` (what is still unsent then is dropped: a collector down or silent must
not hold the stop); the traced layers get its tracer.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any, Final

from influencer_stats.algebras import CollectionStatsQuery, VideoStatsSource
from influencer_stats.algebras.tracing import RequestTracing
from influencer_stats.bootstrap.registry import Registry
from influencer_stats.bootstrap.wiring import Resources

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer

    from influencer_stats.algebras.sources import SourceReader
    from influencer_stats.algebras.youtube import VideosListCall
    from influencer_stats.settings import Settings

TracingBuilder = Callable[[Resources], Awaitable["Tracer | None"]]
TRACING: Registry[TracingBuilder] = Registry("tracing")
#: The service's name in traces unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) names it.
SERVICE_NAME = "influencer-stats"
#: The exporter's last flush at exit takes at most this long (less with a short graceful shutdown).
FLUSH_S: Final = 2.0


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


@TRACING.add("none", "no spans: no traced layer is built, nothing is paid per request")
async def _none(_: Resources) -> Tracer | None:
    return None


#: Where the otel extra comes from: the checkout (the package is not on the package index) or the image.
INSTALL_OTEL = (
    "make run EXTRAS=otel or pip install -e '.[otel]' in the checkout, docker build --build-arg EXTRAS=otel"
)


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


@TRACING.add(
    "otel",
    "OpenTelemetry spans over OTLP/HTTP, set up by the OTEL_* variables (the otel extra)",
    check=_sdk_installed,
    needs=("otlp",),
)
async def _otel(resources: Resources) -> Tracer:
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
    return provider.get_tracer("influencer_stats", version())


def request_tracing(resources: Resources) -> RequestTracing | None:
    """The request spans the edge opens, or None (the edge then builds no tracing path)."""
    if resources.tracer is None:
        return None
    from influencer_stats.interpreters.tracing.otel import OtelRequests

    return OtelRequests(resources.tracer)


def traced_stats(resources: Resources, stats: CollectionStatsQuery, *, cached: bool) -> CollectionStatsQuery:
    """``stats`` under a ``stats.query`` span, when tracing."""
    if resources.tracer is None:
        return stats
    from influencer_stats.interpreters.tracing.otel import TracedStats

    return TracedStats(stats, resources.tracer, cached=cached)


def traced_source(resources: Resources, source: VideoStatsSource, *, cached: bool) -> VideoStatsSource:
    """``source`` under a ``videos.fetch`` span, when tracing."""
    if resources.tracer is None:
        return source
    from influencer_stats.interpreters.tracing.otel import TracedSource

    return TracedSource(source, resources.tracer, cached=cached)


def traced_call(resources: Resources, call: VideosListCall) -> VideosListCall:
    """Each ``videos.list`` call under a CLIENT span, when tracing."""
    if resources.tracer is None:
        return call
    from influencer_stats.interpreters.tracing.otel import TracedVideosList

    return TracedVideosList(call, resources.tracer)


def traced_reader(resources: Resources, reader: SourceReader) -> SourceReader:
    """Each read of a playlist or channel under a ``sources.read`` span, when tracing."""
    if resources.tracer is None:
        return reader
    from influencer_stats.interpreters.tracing.otel import TracedReader

    return TracedReader(reader, resources.tracer)


def httpx_hooks(resources: Resources) -> dict[str, list[Any]] | None:
    """httpx's ``event_hooks`` that send ``traceparent``, when tracing (else httpx's default)."""
    if resources.tracer is None:
        return None
    from influencer_stats.interpreters.tracing.otel_http import httpx_hooks as hooks

    return hooks()


def aiohttp_trace_configs(resources: Resources) -> list[Any] | None:
    """aiohttp's ``trace_configs`` that send ``traceparent``, when tracing (else aiohttp's default)."""
    if resources.tracer is None:
        return None
    from influencer_stats.interpreters.tracing.otel_http import aiohttp_trace_configs as configs

    return configs()
