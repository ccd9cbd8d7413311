"""The ``tracing`` slot: what the root asks of tracing, and ``none``, which builds nothing.

The slot's choice builds one ``Tracing`` first, before everything else; the root then asks it, in
fixed places, for the layer around each stack and for the hooks of the clients. This base class
answers each with what it was given (or None, the library's default): with ``none`` (the default)
no traced layer is built, the edge serves without a request span and every stack is what it
would be without this module. The spans themselves (``otel``) are the ``tracing`` slice's
(``bootstrap/slices/tracing.py``): the core never names them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from influencer_stats.bootstrap.registry import Registry

if TYPE_CHECKING:
    from influencer_stats.algebras import CollectionStatsQuery, VideoStatsSource
    from influencer_stats.algebras.tracing import RequestTracing, Spans
    from influencer_stats.algebras.youtube import VideosListCall
    from influencer_stats.bootstrap.wiring import Resources


#: A client the ``redis`` slice opens (redis-py's, of one server or a Sentinel-watched primary):
#: the core names neither the slice nor the ``redis`` package.
Client = TypeVar("Client")


class Tracing:
    """What the ``tracing`` choice built: a layer for each place the root traces, and the hooks
    of the clients. This one, no tracing, returns what it is given: nothing is built, nothing is
    paid per request. A choice that traces subclasses it (``bootstrap/slices/tracing.py``).
    """

    __slots__ = ()

    def requests(self) -> RequestTracing | None:
        """The request spans the edge opens, or None (the edge then builds no tracing path)."""
        return None

    def stats(self, stats: CollectionStatsQuery, *, cached: bool) -> CollectionStatsQuery:
        """The stats query as the edge calls it (``cached``: a cache decides what it answers)."""
        return stats

    def source(self, source: VideoStatsSource, *, cached: bool) -> VideoStatsSource:
        """The video stack, outermost (``cached``: a per-video cache is in it)."""
        return source

    def call(self, call: VideosListCall) -> VideosListCall:
        """Each ``videos.list`` call, last before the quota governor and the network."""
        return call

    def spans(self) -> Spans | None:
        """The spans a slice opens around its own calls (a read of a playlist), or None: the slice
        then builds no traced layer."""
        return None

    def redis(self, client: Client) -> Client:
        """The ``redis`` slice's shared client of one server or a Sentinel-watched primary, a
        redis-py ``Redis`` (a Cluster's is not traced: ``RedisCluster`` has no span layer)."""
        return client

    def httpx_hooks(self) -> dict[str, list[Any]] | None:
        """httpx's ``event_hooks`` (None: httpx's default)."""
        return None

    def aiohttp_trace_configs(self) -> list[Any] | None:
        """aiohttp's ``trace_configs`` (None: aiohttp's default)."""
        return None


#: No tracing: every answer is what it was given.
NO_TRACING = Tracing()

TracingBuilder = Callable[["Resources"], Awaitable[Tracing]]
TRACING: Registry[TracingBuilder] = Registry("tracing")


@TRACING.add("none", "no spans: no traced layer is built, nothing is paid per request")
async def _none(_: Resources) -> Tracing:
    return NO_TRACING
