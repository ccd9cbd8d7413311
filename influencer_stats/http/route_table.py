"""A route (a template and its handler per method) and a table of them that matches paths.

What the route table (``bootstrap.edge.ROUTES``) is made of, apart from it: ``HttpApi`` takes a matched
``Route`` and the table names the ``handlers``, so this module imports
neither of them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

from returns.result import Result

from influencer_stats.domain.models import CollectionId, Revision, StoreUnavailable
from influencer_stats.http.problems import Reply

#: A request handler: answers one method of one route (a function of ``handlers``, given the
#: ``HttpApi`` and the request).
Handler = Callable[..., Awaitable[Reply]]

#: The one path parameter a template may hold (``Incoming.collection_id``).
PARAMETER = "{id}"


@dataclass(frozen=True, slots=True, eq=False)
class Route:
    """A route template and its handler per method.

    HEAD is answered by GET's handler (the server drops the body), so it is
    added wherever GET is. ``methods`` (sorted) is what ``Allow`` lists.
    """

    template: str
    handlers: Mapping[str, Handler]
    #: The name of the part (``HttpApi.parts``) the handlers take instead of the ``HttpApi``: a
    #: slice's route, its handlers bound once to what its slice built (``RouteGroup``).
    part: str | None = None
    methods: tuple[str, ...] = field(init=False)
    #: (the text before ``{id}``, the text after it); None for a template without one.
    around_parameter: tuple[str, str] | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        handlers = dict(self.handlers)
        if not handlers:
            raise ValueError(f"{self.template!r} has no handler")
        if "GET" in handlers:
            handlers.setdefault("HEAD", handlers["GET"])
        prefix, parameter, suffix = self.template.partition(PARAMETER)
        if not prefix.startswith("/") or "{" in prefix or "{" in suffix or "}" in prefix + suffix:
            raise ValueError(
                f"a template starts with '/' and holds at most one {PARAMETER}: {self.template!r}"
            )
        object.__setattr__(self, "handlers", handlers)
        object.__setattr__(self, "methods", tuple(sorted(handlers)))
        object.__setattr__(self, "around_parameter", (prefix, suffix) if parameter else None)


def route(template: str, **handlers: Handler) -> Route:
    """``route("/x/{id}", GET=HttpApi.get_x, PUT=HttpApi.put_x)``."""
    return Route(template, handlers)


#: A slice's OpenAPI operations by template, given the collection id's parameter and the
#: problem replies of an unknown collection (``openapi_operations``).
Operations = Callable[[dict[str, Any], tuple[Reply, ...]], dict[str, Any]]


@dataclass(frozen=True, slots=True, eq=False)
class RouteGroup:
    """The routes a slice adds to the edge, and how the OpenAPI document describes them.

    Each route's handlers take the slice's part (``Route.part``, which ``HttpApi`` is given
    by name) and the request; ``operations`` documents every template of ``routes``, with
    the ``schemas`` they refer to. The root collects the groups of what is installed
    (``bootstrap/edge.py``): the edge never names a slice.
    """

    name: str
    routes: tuple[Route, ...]
    operations: Operations
    schemas: Mapping[str, Any] = field(default_factory=dict)
    #: What the slice adds to the core's ``/collections/{id}`` in the document (its hooks'
    #: bodies and fields: ``CollectionHooks``), if anything.
    collection: CollectionDoc | None = None

    def __post_init__(self) -> None:
        strays = [r.template for r in self.routes if r.part != self.name]
        if strays:
            raise ValueError(f"the routes of group {self.name!r} take its part: {strays}")


def bound(handler: Handler, part: object) -> Handler:
    """A slice's handler as ``HttpApi`` calls it (with itself), given the part it takes instead."""

    async def with_part(_: object, incoming: object) -> Reply:
        reply: Reply = await handler(part, incoming)
        return reply

    return with_part


#: Forget what a part keeps of a collection (``DELETE /collections/{id}``, before the store).
Forget = Callable[[CollectionId], Awaitable[Result[None, StoreUnavailable]]]
#: A PUT body a part takes (any other JSON document is the core's, a list of ids): its answer,
#: or None when the document is not one it takes.
PutBody = Callable[[CollectionId, object], Awaitable[Reply | None]]
#: The fields a part shows beside a collection's videos (GET), given the collection's revision.
Shown = Callable[[CollectionId, Revision], Awaitable[Result[Mapping[str, object], StoreUnavailable]]]


@dataclass(frozen=True, slots=True)
class CollectionHooks:
    """What a part adds to the core's ``/collections/{id}``, bound to what it built.

    ``put`` answers the PUT bodies it takes (tried in order, before the core's ids); ``saving_ids``
    runs before a PUT of ids saves them; ``shown`` adds fields to a GET; ``deleted`` runs after
    the store deleted the collection (also when it was not found, so a retry tidies up). Each
    failure is the request's answer. The core's routes know a part only through these; the stats
    route takes none of them.
    """

    put: PutBody | None = None
    saving_ids: Forget | None = None
    shown: Shown | None = None
    deleted: Forget | None = None


@dataclass(frozen=True, slots=True)
class CollectionDoc:
    """How the OpenAPI document tells of a part's ``CollectionHooks``: the schemas (of the group's
    ``schemas``) a PUT takes besides the videos, the properties a collection shows besides them,
    the PUT's examples, a sentence of its description, its 422 examples (and what they are) and
    the responses it adds (by status, over the core's)."""

    bodies: tuple[str, ...] = ()
    fields: Mapping[str, Any] = field(default_factory=dict)
    examples: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    invalid: tuple[Reply, ...] = ()
    invalid_text: str = ""
    responses: Mapping[str, Any] = field(default_factory=dict)


def part_route(part: str, template: str, **handlers: Handler) -> Route:
    """A slice's route: ``handlers`` take the part named ``part`` (``RouteGroup``)."""
    return Route(template, handlers, part)


def grouped(core: Iterable[Route], groups: Iterable[RouteGroup], last: Iterable[Route] = ()) -> RouteTable:
    """The table of the ``core`` routes, then every group's, then ``last``."""
    return RouteTable(*core, *(r for group in groups for r in group.routes), *last)


class RouteTable(Mapping[str, Route]):
    """Routes by template, and the matching of a concrete path to one of them.

    A path matches a template without a parameter when it is equal to it, and
    a template ``<prefix>{id}<suffix>`` when it is ``<prefix><id><suffix>`` with
    ``id`` non-empty and free of ``/`` (as Starlette's router matches ``{id}``).

    ``match_raw`` routes the path as it was received, percent-escapes and all
    (ASGI's ``raw_path``, aiohttp's raw path): a template's fixed text matches
    only as written, and the id is percent-decoded only once split off at the
    slashes, so ``/collections/pl%2Fstats`` is the collection ``pl/stats``
    (refused by id validation), never the stats of ``pl``, and a proxy's rule
    on raw paths sees what the service routes. ``match`` takes a path already
    decoded (Granian's RSGI scope has no other), where ``%2F`` was a ``/``.
    """

    def __init__(self, *routes: Route) -> None:
        self._routes = {r.template: r for r in routes}
        if len(self._routes) != len(routes):
            raise ValueError("a template appears twice")
        self._static: dict[str, tuple[Route, str]] = {}
        templated: list[tuple[str, str, int, Route]] = []
        for r in routes:
            if r.around_parameter is None:
                self._static[r.template] = (r, "")
            else:
                prefix, suffix = r.around_parameter
                templated.append((prefix, suffix, len(prefix) + len(suffix), r))
        # The longest suffix first: the more specific template wins (and the stats route, the
        # hottest, is tried first).
        self._templated = sorted(templated, key=lambda entry: -len(entry[1]))
        # Remembered, since the same paths come again and again; bounded, since clients choose
        # them (perf/RESULTS.md, "What was cut": matched paths remembered, 0.6 → 0.06 µs).
        self._remembered = lru_cache(maxsize=_REMEMBERED)(self._match)
        self._remembered_raw = lru_cache(maxsize=_REMEMBERED)(self._match_raw)

    def __getitem__(self, template: str) -> Route:
        return self._routes[template]

    def __iter__(self) -> Iterator[str]:
        return iter(self._routes)

    def __len__(self) -> int:
        return len(self._routes)

    def match(self, path: str) -> tuple[Route, str] | tuple[None, str]:
        """(route, collection id) for a path; (None, "") when no template matches."""
        return self._remembered(path)

    def match_raw(self, raw_path: str | bytes) -> tuple[Route, str] | tuple[None, str]:
        """(route, percent-decoded collection id) for a path as received (ASGI's bytes taken as
        they are: remembered by them, no decoding per request); (None, "") when no template
        matches it as written."""
        return self._remembered_raw(raw_path)

    def _match_raw(self, raw_path: str | bytes) -> tuple[Route, str] | tuple[None, str]:
        if isinstance(raw_path, bytes):
            raw_path = raw_path.decode("latin-1")
        matched, value = self._match(raw_path)
        return (matched, decode_segment(value)) if matched is not None else _NO_MATCH

    def _match(self, path: str) -> tuple[Route, str] | tuple[None, str]:
        static = self._static.get(path)
        if static is not None:
            return static
        for prefix, suffix, fixed, matched in self._templated:
            if len(path) > fixed and path.startswith(prefix) and path.endswith(suffix):
                value = path[len(prefix) : len(path) - len(suffix)]
                if "/" not in value:
                    return matched, value
        return _NO_MATCH


def decode_segment(raw: str) -> str:
    """One path segment's percent-escapes decoded (UTF-8, as uvicorn decodes a path; an invalid
    sequence becomes U+FFFD, which no id accepts). Only after splitting: ``%2F`` stays in it."""
    return unquote(raw) if "%" in raw else raw


_NO_MATCH: tuple[None, str] = (None, "")
#: How many paths a table remembers the match of.
_REMEMBERED = 4096
