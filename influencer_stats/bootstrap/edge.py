"""The one route table: the core's routes and every installed part's (``bootstrap/parts.py``).

Built once, when first imported (after the slots, so every slice's parts are declared): the
servers match paths with it or register its templates, the metrics label requests by its
templates, and the OpenAPI document describes it.
"""

from __future__ import annotations

from typing import Final

from influencer_stats.bootstrap.parts import PARTS
from influencer_stats.bootstrap.slots import SLICES, SLOTS
from influencer_stats.http.openapi import openapi_document
from influencer_stats.http.route_table import RouteGroup, RouteTable
from influencer_stats.http.routes import documented, route_table

assert SLICES is not None  # imported for its effect: the slices' parts are declared
#: The routes of every part installed, in order.
GROUPS: Final[tuple[RouteGroup, ...]] = tuple(part.routes for part in PARTS)
ROUTES: Final[RouteTable] = route_table(GROUPS)
#: The templates the OpenAPI document describes, in table order.
DOCUMENTED: Final = documented(ROUTES)
#: The readiness checks (``/readyz``) the registered choices declare (``Entry.ready``), in order:
#: the OpenAPI document's examples name these, never a removed slice's.
CHECKS: Final = tuple(dict.fromkeys(c for slot in SLOTS.values() for e in slot.registry for c in e.ready))


def openapi(max_videos: int) -> bytes:
    """The OpenAPI document of ``ROUTES``, stating the limit ``max_videos``."""
    return openapi_document(max_videos, GROUPS, CHECKS)
