"""The parts the edge is extended with: what a slice adds to the API, the root never naming it.

A ``Part`` is declared by the module of a slot or slice (``PARTS.append``), as registries'
entries are: its routes (``RouteGroup``: templates, handlers, OpenAPI operations) and how to
build what its handlers take from the stores the root built, starting its background tasks
there too (``Wiring.background``). The root builds every part installed and hands ``HttpApi``
what they built (``parts``, ``forgets``, ``collections``), and the layers slices fold around the
answer (``EDGE_LAYERS``: CORS, the access log); ``bootstrap/edge.py`` makes the one route table of
the core and every part's routes, for the servers, the OpenAPI document and the metrics.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from influencer_stats.algebras import CollectionStatsQuery, CollectionStore, EventLog
from influencer_stats.bootstrap.wiring import Wiring
from influencer_stats.http.layers import EdgeLayer
from influencer_stats.http.route_table import CollectionHooks, Forget, RouteGroup


@dataclass(frozen=True, slots=True)
class Built:
    """What a part built: what its handlers take, what ``DELETE`` forgets through before the store
    (if anything), and what it adds to the core's ``/collections/{id}`` (``CollectionHooks``)."""

    part: object
    forget: Forget | None = None
    collections: CollectionHooks | None = None


#: Build a part from the stores the root built: the collections and the stats query.
PartBuilder = Callable[[Wiring, CollectionStore, CollectionStatsQuery], Awaitable[Built]]


@dataclass(frozen=True, slots=True)
class Part:
    """A slice's addition to the edge: its routes and how to build what they take."""

    routes: RouteGroup
    build: PartBuilder

    @property
    def name(self) -> str:
        return self.routes.name


#: Every part installed, in the order their routes follow the core's.
PARTS: list[Part] = []

#: Build a slice's layer of the answer from the wiring (its settings, log and metrics), or None
#: while the slice's setting leaves it off (``http.layers.EdgeLayer``).
EdgeLayerBuilder = Callable[[Wiring, EventLog], EdgeLayer | None]
#: What slices fold around the edge's answer, outermost first (in ``INSTALLED`` order): the root
#: builds each and hands ``HttpApi`` those that are on (the access log's outermost, CORS inside).
EDGE_LAYERS: list[EdgeLayerBuilder] = []


def quota_short(wiring: Wiring) -> Callable[[], bool]:
    """Whether the day's quota budget runs short now (background passes that spend wait; never
    without a budget)."""
    return wiring.quota.short
