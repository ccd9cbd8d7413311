"""The route table: how paths match templates, and what a route answers."""

from __future__ import annotations

import sys

import orjson
import pytest

from influencer_stats.bootstrap.edge import GROUPS, ROUTES
from influencer_stats.http import handlers
from influencer_stats.http.api import HttpApi
from influencer_stats.http.docs import ASSETS
from influencer_stats.http.incoming import Incoming
from influencer_stats.http.openapi import openapi_spec
from influencer_stats.http.problems import Reply
from influencer_stats.http.route_table import Route, RouteGroup, RouteTable, grouped, part_route, route
from influencer_stats.http.routes import (
    COLLECTION,
    COLLECTIONS,
    DOCS,
    DOCS_ROUTES,
    HEALTHZ,
    METRICS,
    OPENAPI,
    READYZ,
    STATS,
)
from tests.unit.http_api_support import service


async def _answer(api: HttpApi, incoming: Incoming) -> Reply:
    return Reply(200)


@pytest.mark.parametrize(
    ("path", "template", "collection_id"),
    [
        ("/healthz", HEALTHZ, ""),
        ("/readyz", READYZ, ""),
        ("/metrics", METRICS, ""),
        ("/openapi.json", OPENAPI, ""),
        ("/collections", COLLECTIONS, ""),
        ("/collections/abc", COLLECTION, "abc"),
        ("/collections/bad id;x", COLLECTION, "bad id;x"),  # validation, not routing, refuses it
        ("/collections/stats", COLLECTION, "stats"),
        ("/collections/abc/stats", STATS, "abc"),
        ("/collections/stats/stats", STATS, "stats"),
    ],
)
def test_a_path_matches_its_template_and_yields_the_collection_id(
    path: str, template: str, collection_id: str
) -> None:
    matched, value = ROUTES.match(path)

    assert matched is ROUTES[template]
    assert value == collection_id


@pytest.mark.parametrize(
    "path",
    [
        "",
        "/",
        "/nope",
        "/healthz/",
        "healthz",
        "/collections/",
        "/collections//stats",
        "/collections/a/b",
        "/collections/a/b/stats",
        "/collections/a/stats/",
        "/collections/a/statsx",
        "/collectionsx/a",
    ],
)
def test_a_path_that_no_template_describes_matches_nothing(path: str) -> None:
    assert ROUTES.match(path) == (None, "")


def test_head_goes_with_get_and_allow_lists_the_methods_sorted() -> None:
    assert ROUTES[COLLECTION].methods == ("DELETE", "GET", "HEAD", "PUT")
    assert ROUTES[STATS].methods == ("GET", "HEAD")
    assert ROUTES[STATS].handlers["HEAD"] is ROUTES[STATS].handlers["GET"]
    assert route("/w", PUT=_answer).methods == ("PUT",)  # no GET, no HEAD


def test_every_core_handler_is_a_function_of_the_handlers_module_and_a_parts_takes_its_part() -> None:
    parts = {group.name for group in GROUPS}
    for template, entry in ROUTES.items():
        for method, handler in entry.handlers.items():
            module = handlers if entry.part is None else sys.modules[handler.__module__]
            assert getattr(module, handler.__name__) is handler, (template, method)
            assert entry.part is None or entry.part in parts, (template, entry.part)


async def _parted(part: list[str], incoming: Incoming) -> Reply:
    part.append(incoming.collection_id)
    return Reply(200, orjson.dumps(part))


async def test_a_group_adds_its_routes_after_the_cores_and_its_handlers_take_its_part() -> None:
    group = RouteGroup("seen", (part_route("seen", "/collections/{id}/seen", GET=_parted),), lambda *_: {})
    table = grouped(ROUTES.values(), [group])
    seen: list[str] = []
    api = service().api
    api.parts["seen"] = seen

    matched, value = table.match("/collections/c/seen")
    assert matched is not None and matched.part == "seen"
    reply = await api.serve(Incoming(matched, "GET", value))

    assert (reply.status, seen) == (200, ["c"])
    assert list(table)[-1] == "/collections/{id}/seen"
    with pytest.raises(ValueError, match="take its part"):
        RouteGroup("other", group.routes, lambda *_: {})


def test_the_openapi_document_describes_exactly_the_api_routes_and_their_methods_but_head() -> None:
    paths = openapi_spec(groups=GROUPS)["paths"]

    assert list(paths) == [template for template in ROUTES if template not in DOCS_ROUTES]
    for template in paths:
        # HEAD is answered wherever GET is and said once in info.description: /docs lists no GET twice.
        assert {m.upper() for m in paths[template] if m != "parameters"} == set(ROUTES[template].methods) - {
            "HEAD"
        }
        assert ("HEAD" in ROUTES[template].methods) == ("GET" in ROUTES[template].methods)


def test_the_docs_routes_are_the_page_and_one_route_per_allow_listed_asset() -> None:
    assert {DOCS, *(f"/docs/assets/{name}" for name in ASSETS)} == DOCS_ROUTES
    assert all(
        ROUTES[template].around_parameter is None for template in DOCS_ROUTES
    )  # no {id}: no other name


def test_a_new_route_is_one_entry_and_is_matched_and_dispatched_by_it() -> None:
    table = RouteTable(*ROUTES.values(), route("/collections/{id}/videos", GET=_answer))

    matched, value = table.match("/collections/c/videos")

    assert matched is not None and matched.template == "/collections/{id}/videos"
    assert (value, matched.handlers["GET"]) == ("c", _answer)
    assert table.match("/collections/c/stats")[0] is ROUTES[STATS]


@pytest.mark.parametrize("template", ["/a/{id}/b/{id}", "/a/{other}", "a/{id}", "{id}", "/a/{id", "/a/id}"])
def test_a_template_holds_at_most_one_id_parameter(template: str) -> None:
    with pytest.raises(ValueError, match="template"):
        route(template, GET=_answer)


def test_a_route_needs_a_handler_and_a_table_each_template_once() -> None:
    with pytest.raises(ValueError, match="no handler"):
        Route("/a", {})
    with pytest.raises(ValueError, match="twice"):
        RouteTable(route("/a", GET=_answer), route("/a", PUT=_answer))


def test_when_two_templates_describe_a_path_the_longer_suffix_wins() -> None:
    table = RouteTable(route("/a/{id}", GET=_answer), route("/a/{id}.json", PUT=_answer))

    matched, value = table.match("/a/x.json")

    assert matched is not None and (matched.template, value) == ("/a/{id}.json", "x")
    assert table.match("/a/x.yaml")[0] is table["/a/{id}"]
