"""The operations of the OpenAPI document: summaries, parameters, responses and examples.

One entry per route of ``routes.CORE`` (a slice's are its ``RouteGroup``'s), made of ``openapi_parts``;
``openapi`` assembles the document around them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from influencer_stats.domain.models import (
    CollectionId,
    CollectionNotFound,
)
from influencer_stats.domain.validation import parse_collection_body
from influencer_stats.http import problems
from influencer_stats.http.api import MAX_BODY_BYTES
from influencer_stats.http.handlers import MAX_JSON_DEPTH
from influencer_stats.http.openapi_parts import (
    BAD_ID,
    ETAG,
    IF_NONE_MATCH,
    LINK_NEXT,
    REQUEST_ID,
    RETRY_AFTER,
    STORE_DOWN,
    TITLE,
    UNAUTHORIZED_REPLY,
    UPSTREAM_FAILED,
    json_response,
    not_modified,
    operation,
    problem_response,
)
from influencer_stats.http.pagination import (
    CURSOR_PATTERN,
    DEFAULT_LIMIT,
    MAX_LIMIT,
    cursor_of,
    parse_page_request,
)
from influencer_stats.http.route_table import CollectionDoc, RouteGroup
from influencer_stats.http.routes import COLLECTION, COLLECTIONS, HEALTHZ, METRICS, OPENAPI, READYZ, STATS
from influencer_stats.version import version

# The examples: one story, a campaign's collection of real YouTube videos (11-character ids).
_VIDEOS = ["dQw4w9WgXcQ", "9bZkp7q19f0", "kJQP7kiw5Fk"]
_COLLECTION_ID = "summer-campaign-2024"
_PAGE = ["spring-teasers", "summer-campaign-2024", "winter-unboxing"]
_PAGE_AFTER = "autumn-launch"

TAGS = [
    {"name": "collections", "description": "Collections of YouTube videos: save, read, list, delete."},
    {"name": "stats", "description": "Aggregate statistics of a collection's videos, from YouTube."},
    {"name": "operations", "description": "Liveness, readiness, metrics and this document."},
]

_ID = {
    "name": "id",
    "in": "path",
    "required": True,
    "description": "collection id",
    "schema": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$"},
    "example": _COLLECTION_ID,
}
_NOT_FOUND_REPLY = problems.for_error(CollectionNotFound(CollectionId(_COLLECTION_ID)))
_NOT_FOUND = problem_response("no such collection", _NOT_FOUND_REPLY)
_WRITE_SECURITY: list[dict[str, list[str]]] = [
    {},
    {"bearer": []},
]  # needed only when the service has a write token
_METRICS_EXAMPLE = """\
# HELP influencer_stats_http_requests_total HTTP requests by route, method and status
# TYPE influencer_stats_http_requests_total counter
influencer_stats_http_requests_total{route="/collections/{id}/stats",method="GET",status="200"} 1027.0
"""


def operations(groups: Iterable[RouteGroup] = (), checks: tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    """Every operation by template: the core's, and each group's (a slice's routes); ``checks``
    name the readiness checks ``/readyz`` may report (its examples')."""
    groups = tuple(groups)
    return {
        **{t: op for group in groups for t, op in group.operations(_ID, (_NOT_FOUND_REPLY,)).items()},
        **_collection(tuple(group.collection for group in groups if group.collection is not None)),
        HEALTHZ: {
            "get": operation(
                "getHealth",
                "operations",
                "Liveness",
                responses={"200": json_response("Status", "the process answers", {"status": "ok"})},
            )
        },
        READYZ: {
            "get": operation(
                "getReadiness",
                "operations",
                "Readiness: the profile's dependencies answer",
                responses=_readiness(checks),
            )
        },
        METRICS: {
            "get": operation(
                "getMetrics",
                "operations",
                "Prometheus metrics",
                responses={
                    "200": {
                        "description": "text exposition format",
                        "headers": {"X-Request-ID": REQUEST_ID},
                        "content": {
                            "text/plain": {"schema": {"type": "string"}, "example": _METRICS_EXAMPLE}
                        },
                    }
                },
            )
        },
        OPENAPI: {
            "get": operation(
                "getOpenApiDocument",
                "operations",
                "This document",
                responses={
                    "200": {
                        "description": "OpenAPI 3.1",
                        "headers": {"X-Request-ID": REQUEST_ID},
                        "content": {
                            "application/json": {
                                "schema": {"type": "object"},
                                "example": {
                                    "openapi": "3.1.0",
                                    "info": {"title": TITLE, "version": version()},
                                    "paths": {"/healthz": {"get": {"operationId": "getHealth"}}},
                                },
                            }
                        },
                    }
                },
            )
        },
        COLLECTIONS: {
            "parameters": [
                {
                    "name": "limit",
                    "in": "query",
                    "required": False,
                    "description": f"ids per page, at most {MAX_LIMIT}",
                    "schema": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_LIMIT,
                        "default": DEFAULT_LIMIT,
                    },
                    "example": len(_PAGE),
                },
                {
                    "name": "cursor",
                    "in": "query",
                    "required": False,
                    "description": "the previous page's next (opaque); without it, the first page",
                    "schema": {"type": "string", "pattern": CURSOR_PATTERN},
                    "example": cursor_of(CollectionId(_PAGE_AFTER)),
                },
            ],
            "get": operation(
                "listCollections",
                "collections",
                "The collection ids, sorted, a page at a time",
                responses={
                    "200": json_response(
                        "Ids",
                        "a page of ids, and the next page's cursor when there is one (and its Link)",
                        {"ids": _PAGE, "next": cursor_of(CollectionId(_PAGE[-1]))},
                        Link={
                            **LINK_NEXT,
                            "example": f'</collections?limit={len(_PAGE)}&cursor={cursor_of(CollectionId(_PAGE[-1]))}>; rel="next"',
                        },
                    ),
                    "422": problem_response(
                        f"limit not an integer from 1 to {MAX_LIMIT}, cursor malformed, or either repeated",
                        problems.invalid_input(parse_page_request("limit=5000").failure()),
                    ),
                    "503": STORE_DOWN,
                },
            ),
        },
        STATS: {
            "parameters": [_ID],
            "get": operation(
                "getCollectionStats",
                "stats",
                "Aggregate statistics of a collection",
                parameters=[IF_NONE_MATCH],
                responses={
                    "200": json_response(
                        "Stats",
                        "the aggregate, its ETag; Cache-Status and Age when a cache served it",
                        {
                            "impressions": 18760776,
                            "engagements": 383586,
                            "score": 710585,
                            "videos": 3,
                            "missing": [],
                        },
                        **{
                            "Cache-Status": {
                                "schema": {"type": "string"},
                                "example": "influencer-stats; hit; ttl=7",
                            },
                            "Age": {"schema": {"type": "string"}, "example": "3"},
                            "ETag": ETAG,
                        },
                    ),
                    "304": not_modified(
                        **{
                            "Cache-Status": {"schema": {"type": "string"}},
                            "Age": {"schema": {"type": "string"}},
                        }
                    ),
                    "404": _NOT_FOUND,
                    "422": BAD_ID,
                    **UPSTREAM_FAILED,
                },
            ),
        },
    }


def _readiness(checks: tuple[str, ...]) -> dict[str, Any]:
    """``/readyz``'s answers, its examples naming ``checks``: with none, it is always ready."""
    ready = {"status": "ready", "checks": dict.fromkeys(checks, "ok")}
    responses = {"200": json_response("Status", "ready", ready)}
    if checks:
        failing = checks[-1]
        responses["503"] = problem_response(
            "a dependency is not answering",
            problems.problem(
                503,
                "not-ready",
                "Not ready",
                f"dependencies not answering: {failing}",
                checks={**dict.fromkeys(checks, "ok"), failing: "failing"},
            ),
            **{"Retry-After": RETRY_AFTER},
        )
    return responses


def _collection(docs: tuple[CollectionDoc, ...]) -> dict[str, dict[str, Any]]:
    """``/collections/{id}``: GET, PUT and DELETE, with what the parts add to the PUT (``docs``)."""
    described = " ".join(doc.description for doc in docs if doc.description)
    return {
        COLLECTION: {
            "parameters": [_ID],
            "get": operation(
                "getCollection",
                "collections",
                "A collection's videos",
                parameters=[IF_NONE_MATCH],
                responses={
                    "200": json_response(
                        "Collection",
                        "the videos, in the order saved (or read), and what else is known of them",
                        {"videos": _VIDEOS},
                        ETag=ETAG,
                    ),
                    "304": not_modified(),
                    "404": _NOT_FOUND,
                    "422": BAD_ID,
                    "503": STORE_DOWN,
                },
            ),
            "put": operation(
                "putCollection",
                "collections",
                "Create or replace a collection: its videos"
                + (", or where to read them from" if any(doc.bodies for doc in docs) else ""),
                **({"description": described} if described else {}),
                security=_WRITE_SECURITY,
                requestBody={
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {"$ref": "#/components/schemas/CollectionBody"},
                            "examples": {
                                "videos": {"summary": "the videos themselves", "value": {"videos": _VIDEOS}},
                                **{name: example for doc in docs for name, example in doc.examples.items()},
                            },
                        }
                    },
                },
                responses={
                    "503": STORE_DOWN,
                    "200": json_response("Collection", "replaced", {"videos": _VIDEOS}),
                    "201": json_response(
                        "Collection",
                        "created",
                        {"videos": _VIDEOS},
                        Location={"schema": {"type": "string"}, "example": f"/collections/{_COLLECTION_ID}"},
                    ),
                    "400": problem_response(
                        "the body is not JSON, nests deeper than "
                        f"{MAX_JSON_DEPTH} levels or ended before its Content-Length; "
                        "or the path is not ASCII once percent-decoded",
                        problems.malformed_json("the body is not valid JSON: Input data was truncated"),
                        problems.body_incomplete(),
                        problems.path_not_ascii(),
                    ),
                    "401": problem_response(
                        "a write token is set and the request does not carry it",
                        UNAUTHORIZED_REPLY,
                        **{"WWW-Authenticate": {"schema": {"type": "string"}}},
                    ),
                    "413": problem_response(
                        f"the body is over {MAX_BODY_BYTES} bytes", problems.body_too_large(MAX_BODY_BYTES)
                    ),
                    "422": problem_response(
                        "wrong body shape, bad id, a key given twice in one object, too many videos"
                        + "".join(f"; {doc.invalid_text}" for doc in docs if doc.invalid_text),
                        problems.invalid_input(parse_collection_body({"videos": ["dQw4w9WgXc"]}).failure()),
                        *(reply for doc in docs for reply in doc.invalid),
                    ),
                    **{status: response for doc in docs for status, response in doc.responses.items()},
                },
            ),
            "delete": operation(
                "deleteCollection",
                "collections",
                "Delete a collection",
                security=_WRITE_SECURITY,
                responses={
                    "204": {"description": "deleted", "headers": {"X-Request-ID": REQUEST_ID}},
                    "401": problem_response(
                        "a write token is set and the request does not carry it", UNAUTHORIZED_REPLY
                    ),
                    "404": _NOT_FOUND,
                    "422": BAD_ID,
                    "503": STORE_DOWN,
                },
            ),
        }
    }
