"""The OpenAPI 3.1 document of the API, built from the one route table.

Every server serves these bytes at ``/openapi.json``, and ``/docs`` shows them;
schemathesis checks each server's behaviour against them, so document and
servers cannot drift. Each operation has an ``operationId``, a tag and
examples (``openapi_operations``); the problem examples are built by the
functions that build the service's own problems, so they read as the service
answers. ``info.version`` is the installed package's.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

import orjson

from influencer_stats.domain.validation import DEFAULT_MAX_VIDEOS
from influencer_stats.http import problems
from influencer_stats.http.openapi_operations import TAGS, operations
from influencer_stats.http.openapi_parts import (
    BAD_PATH,
    QUOTA_EXHAUSTED_EXAMPLE,
    TITLE,
    problem_response,
    videos_array,
)
from influencer_stats.http.pagination import CURSOR_PATTERN, MAX_LIMIT
from influencer_stats.http.route_table import CollectionDoc, Route, RouteGroup
from influencer_stats.http.routes import documented as documented_templates
from influencer_stats.http.routes import route_table
from influencer_stats.version import version

__all__ = ["QUOTA_EXHAUSTED_EXAMPLE", "openapi_document", "openapi_spec"]


_SCHEMAS: dict[str, Any] = {
    "Problem": {
        "type": "object",
        "description": "RFC 9457 problem details; validation problems add field and value.",
        "required": ["type", "title", "status", "detail"],
        "properties": {
            "type": {"type": "string"},
            "title": {"type": "string"},
            "status": {"type": "integer"},
            "detail": {"type": "string"},
            "field": {"type": "string"},
            "value": {},
            "checks": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    },
    "VideoId": {"type": "string", "pattern": "^[A-Za-z0-9_-]{11}$"},
    "Stats": {
        "type": "object",
        "required": ["impressions", "engagements", "score", "videos", "missing"],
        "additionalProperties": False,
        "properties": {
            "impressions": {"type": "integer", "minimum": 0, "description": "sum of views"},
            "engagements": {
                "type": "integer",
                "minimum": 0,
                "description": "sum of likes + comments + dislikes",
            },
            "score": {"type": "integer", "minimum": 0, "description": "engagements + sum of likes"},
            "videos": {"type": "integer", "minimum": 0, "description": "distinct videos counted"},
            "missing": {"type": "array", "items": {"$ref": "#/components/schemas/VideoId"}},
        },
    },
    "Ids": {
        "type": "object",
        "description": "One page of the collection ids; next only when more follow.",
        "required": ["ids"],
        "additionalProperties": False,
        "properties": {
            "ids": {
                "type": "array",
                "maxItems": MAX_LIMIT,
                "items": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$"},
                "description": "at most limit ids, ascending, after the cursor",
            },
            "next": {
                "type": "string",
                "pattern": CURSOR_PATTERN,
                "description": "the cursor of the next page (opaque: pass it back unchanged)",
            },
        },
    },
    "Status": {"type": "object", "required": ["status"], "properties": {"status": {"type": "string"}}},
}


def _path_item(route: Route, path_item: dict[str, Any]) -> dict[str, Any]:
    """The documented operations of one route: exactly the methods it answers, but HEAD.

    HEAD answers like GET, without a body, on every route that answers GET; the
    document says so once (``info.description``) rather than list each GET twice
    (``/docs`` would show both). 500 can happen anywhere, and 400 wherever the
    path holds an id.
    """
    item = dict(path_item)
    documented = {key.upper() for key in item if key != "parameters"}
    if "HEAD" in route.methods and "GET" in documented:
        documented.add("HEAD")
    if documented != set(route.methods):
        raise AssertionError(f"{route.template}: documented {sorted(documented)}, answers {route.methods}")
    for method in ("get", "put", "post", "delete"):
        if method in item:
            bad_path = {"400": BAD_PATH} if route.around_parameter is not None else {}
            item[method] = {
                **item[method],
                "responses": {
                    **bad_path,
                    **item[method]["responses"],
                    "500": problem_response("a bug", problems.internal_error()),
                },
            }
    return item


def _collection_schemas(max_videos: int, docs: Iterable[CollectionDoc]) -> dict[str, Any]:
    """``Videos`` (the ids a PUT takes: ``maxItems`` is the limit the serving service enforces),
    ``CollectionBody`` (what a PUT takes: them, or a body a part takes) and ``Collection`` (what
    is shown: the videos, and what the parts show beside them)."""
    docs = tuple(docs)
    bodies = [{"$ref": f"#/components/schemas/{name}"} for doc in docs for name in doc.bodies]
    return {
        "Videos": {
            "type": "object",
            "required": ["videos"],
            "additionalProperties": False,
            "properties": {"videos": videos_array(max_videos)},
        },
        "CollectionBody": {
            "description": "The videos themselves" + (", or where to read them from." if bodies else "."),
            "oneOf": [{"$ref": "#/components/schemas/Videos"}, *bodies],
        },
        "Collection": {
            "type": "object",
            "description": "A collection's videos"
            + (", and what else is known of them." if any(doc.fields for doc in docs) else "."),
            "required": ["videos"],
            "additionalProperties": False,
            "properties": {
                "videos": videos_array(max_videos),
                **{name: schema for doc in docs for name, schema in doc.fields.items()},
            },
        },
    }


def openapi_spec(
    max_videos: int = DEFAULT_MAX_VIDEOS, groups: Iterable[RouteGroup] = (), checks: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The document as a dict: one path per documented route of the table of the core and
    ``groups`` (``routes.route_table``), one operation per method; ``/readyz``'s examples name
    ``checks`` (the readiness checks the installed choices declare).

    ``max_videos`` is the limit the service enforces (INFLUENCER_STATS_MAX_VIDEOS), so the
    document states the limit of the service that serves it. The docs page and its files
    (``routes.DOCS_ROUTES``) are for people, not API clients, and are left out.
    """
    groups = tuple(groups)
    table = route_table(groups)
    templates = documented_templates(table)
    documented = operations(groups, checks)
    schemas = {
        **_SCHEMAS,
        **{name: schema for group in groups for name, schema in group.schemas.items()},
        **_collection_schemas(max_videos, (g.collection for g in groups if g.collection is not None)),
    }
    if set(documented) != set(templates):
        raise AssertionError(f"every route is documented, and only those: {set(documented) ^ set(templates)}")
    paths = {template: _path_item(table[template], documented[template]) for template in templates}
    ids = [op["operationId"] for item in paths.values() for key, op in item.items() if key != "parameters"]
    if len(ids) != len(set(ids)):
        raise AssertionError(f"an operationId is used twice: {sorted(ids)}")
    return {
        "openapi": "3.1.0",
        "info": {
            "title": TITLE,
            "version": version(),
            "description": "YouTube statistics for collections of videos. Errors are RFC 9457 problems. "
            "Every GET also answers HEAD (the same status and headers, no body), not listed apart. "
            "An answer of INFLUENCER_STATS_GZIP_MIN_BYTES or more (1 KiB by default) says "
            "`Vary: Accept-Encoding` and is gzipped (`Content-Encoding: gzip`) when the request's "
            "Accept-Encoding accepts gzip; its ETag, if any, then ends in `-gzip` inside the quotes. "
            "Cross-origin calls (CORS) are off unless the service allows origins "
            "(INFLUENCER_STATS_CORS_ORIGINS): then an OPTIONS preflight from an allowed origin is a 204 "
            "with the Access-Control-Allow-* headers, any other OPTIONS answers as without CORS (405), "
            "and answers to an allowed origin carry Access-Control-Allow-Origin and expose X-Request-ID, "
            "ETag, Link, Retry-After, Location, Cache-Status and Age. "
            "Interactive documentation: [/docs](/docs).",
        },
        "servers": [{"url": "/", "description": "this service (same origin)"}],
        "tags": TAGS,
        "paths": paths,
        "components": {
            "schemas": schemas,
            "headers": {
                "X-Request-ID": {
                    "description": "the request's id: the client's X-Request-ID if valid, else a new one",
                    "schema": {"type": "string"},
                },
                "Content-Encoding": {
                    "description": "gzip when the answer is large enough and Accept-Encoding accepts gzip",
                    "schema": {"type": "string", "enum": ["gzip"]},
                },
                "Vary": {
                    "description": "Accept-Encoding on answers large enough to be gzipped; Origin when "
                    "CORS allows a list of origins",
                    "schema": {"type": "string"},
                },
            },
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }


@cache
def openapi_document(
    max_videos: int = DEFAULT_MAX_VIDEOS, groups: tuple[RouteGroup, ...] = (), checks: tuple[str, ...] = ()
) -> bytes:
    return orjson.dumps(openapi_spec(max_videos, groups, checks))
