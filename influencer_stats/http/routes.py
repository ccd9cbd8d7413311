"""The core's routes: every route template, the methods it answers and their handlers.

``route_table`` adds to them the routes of the slices installed (``RouteGroup``); the root
builds the one table every server, the OpenAPI document and the metrics' route labels take
(``bootstrap/edge.py``: ``ROUTES``), once, at start. It is the one source of truth for the
API's surface. A server either
registers each template with its framework (Starlette, every method, no slash
redirects, on the path as received) or matches the path with ``ROUTES.match_raw``
(the aiohttp and ASGI apps; ``ROUTES.match`` for the RSGI app, which has only the
decoded path); either way it hands ``HttpApi.answer`` the matched
``Route``, whose handlers ``HttpApi`` dispatches to by method (a dict lookup),
or asks ``HttpApi.unmatched`` for the refusal when no template matches. The
OpenAPI document describes the same table, and refuses to build if they
differ. Adding a core route is one entry here plus its handler (a function of
``handlers``) and its OpenAPI operation (the docs page and its files,
``DOCS_ROUTES``, are for people and left out of it); a slice's are its ``RouteGroup``.
"""

from __future__ import annotations

from collections.abc import Iterable

from influencer_stats.http import docs, handlers
from influencer_stats.http.route_table import RouteGroup, RouteTable, grouped, route

HEALTHZ = "/healthz"
READYZ = "/readyz"
METRICS = "/metrics"
OPENAPI = "/openapi.json"
COLLECTIONS = "/collections"
COLLECTION = "/collections/{id}"
STATS = "/collections/{id}/stats"
DOCS = docs.DOCS_PATH
#: One route per allow-listed file of the docs page: no other name under the prefix matches.
DOCS_ASSETS = tuple(docs.ASSET_PREFIX + name for name in docs.ASSETS)
#: The routes for people, not API clients: the OpenAPI document leaves them out.
DOCS_ROUTES = frozenset({DOCS, *DOCS_ASSETS})


#: The core's API routes, in the order the table and the OpenAPI document list them.
CORE = (
    route(HEALTHZ, GET=handlers.liveness),
    route(READYZ, GET=handlers.readiness),
    route(METRICS, GET=handlers.scrape_metrics),
    route(OPENAPI, GET=handlers.describe),
    route(COLLECTIONS, GET=handlers.list_collections),
    route(
        COLLECTION,
        GET=handlers.get_collection,
        PUT=handlers.put_collection,
        DELETE=handlers.delete_collection,
    ),
    route(STATS, GET=handlers.collection_stats),
)
#: The docs page and its files, after every API route.
_PAGES = (
    route(DOCS, GET=handlers.docs_page),
    *(route(template, GET=handlers.docs_asset) for template in DOCS_ASSETS),
)


def route_table(groups: Iterable[RouteGroup] = ()) -> RouteTable:
    """The core's routes, then each group's (a slice's), then the docs page's."""
    return grouped(CORE, groups, _PAGES)


def documented(table: RouteTable) -> tuple[str, ...]:
    """The templates the OpenAPI document describes, in table order."""
    return tuple(template for template in table if template not in DOCS_ROUTES)
