"""The OpenAPI 3.1 document of the API, built from the one route table.

Every server serves these bytes at ``/openapi.json``; schemathesis checks
each server's behaviour against them, so document and servers cannot drift.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import orjson

from influencer_stats.http.api import MAX_BODY_BYTES, MAX_JSON_DEPTH
from influencer_stats.http.pagination import CURSOR_PATTERN, DEFAULT_LIMIT, MAX_LIMIT
from influencer_stats.http.routes import (
    COLLECTION,
    COLLECTIONS,
    HEALTHZ,
    METRICS,
    OPENAPI,
    READYZ,
    ROUTES,
    STATS,
    Route,
)
from influencer_stats.logic.validation import DEFAULT_MAX_VIDEOS

_PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}
_REQUEST_ID = {"$ref": "#/components/headers/X-Request-ID"}

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


def _json(schema: str, description: str, **headers: Any) -> dict[str, Any]:
    return {
        "description": description,
        "headers": {"X-Request-ID": _REQUEST_ID, **headers},
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}}},
    }


def _problem(description: str, **headers: Any) -> dict[str, Any]:
    return {
        "description": description,
        "headers": {"X-Request-ID": _REQUEST_ID, **headers},
        "content": {"application/problem+json": {"schema": _PROBLEM_REF}},
    }


_RETRY_AFTER = {"schema": {"type": "string"}, "description": "seconds to wait"}
_ID = {
    "name": "id",
    "in": "path",
    "required": True,
    "description": "collection id",
    "schema": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$"},
}
_STORE_DOWN = _problem("collection storage unavailable", **{"Retry-After": _RETRY_AFTER})
_BAD_ID = _problem("invalid collection id")
_BAD_PATH = _problem("the path is not ASCII once percent-decoded")
_NOT_FOUND = _problem("no such collection")
_WRITE_SECURITY: list[dict[str, list[str]]] = [
    {},
    {"bearer": []},
]  # needed only when the service has a write token


def _operations() -> dict[str, dict[str, Any]]:
    return {
        HEALTHZ: {
            "get": {"summary": "Liveness", "responses": {"200": _json("Status", "the process answers")}}
        },
        READYZ: {
            "get": {
                "summary": "Readiness: the profile's dependencies answer",
                "responses": {
                    "200": _json("Status", "ready"),
                    "503": _problem("a dependency is not answering", **{"Retry-After": _RETRY_AFTER}),
                },
            }
        },
        METRICS: {
            "get": {
                "summary": "Prometheus metrics",
                "responses": {
                    "200": {
                        "description": "text exposition format",
                        "headers": {"X-Request-ID": _REQUEST_ID},
                        "content": {"text/plain": {"schema": {"type": "string"}}},
                    }
                },
            }
        },
        OPENAPI: {
            "get": {
                "summary": "This document",
                "responses": {
                    "200": {
                        "description": "OpenAPI 3.1",
                        "headers": {"X-Request-ID": _REQUEST_ID},
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    }
                },
            }
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
                },
                {
                    "name": "cursor",
                    "in": "query",
                    "required": False,
                    "description": "the previous page's next (opaque); without it, the first page",
                    "schema": {"type": "string", "pattern": CURSOR_PATTERN},
                },
            ],
            "get": {
                "summary": "The collection ids, sorted, a page at a time",
                "responses": {
                    "200": _json("Ids", "a page of ids, and the next page's cursor when there is one"),
                    "422": _problem(
                        f"limit not an integer from 1 to {MAX_LIMIT}, cursor malformed, or either repeated"
                    ),
                    "503": _STORE_DOWN,
                },
            },
        },
        COLLECTION: {
            "parameters": [_ID],
            "get": {
                "summary": "A collection's videos",
                "responses": {
                    "200": _json("Videos", "the videos, in the order saved"),
                    "404": _NOT_FOUND,
                    "422": _BAD_ID,
                    "503": _STORE_DOWN,
                },
            },
            "put": {
                "summary": "Create or replace a collection",
                "security": _WRITE_SECURITY,
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Videos"}}},
                },
                "responses": {
                    "200": _json("Videos", "replaced"),
                    "201": _json("Videos", "created", Location={"schema": {"type": "string"}}),
                    "400": _problem(
                        "the body is not JSON, nests deeper than "
                        f"{MAX_JSON_DEPTH} levels or ended before its Content-Length; "
                        "or the path is not ASCII once percent-decoded"
                    ),
                    "401": _problem(
                        "a write token is set and the request does not carry it",
                        **{"WWW-Authenticate": {"schema": {"type": "string"}}},
                    ),
                    "413": _problem(f"the body is over {MAX_BODY_BYTES} bytes"),
                    "422": _problem("wrong body shape, bad id, or too many videos"),
                    "503": _STORE_DOWN,
                },
            },
            "delete": {
                "summary": "Delete a collection",
                "security": _WRITE_SECURITY,
                "responses": {
                    "204": {"description": "deleted", "headers": {"X-Request-ID": _REQUEST_ID}},
                    "401": _problem("a write token is set and the request does not carry it"),
                    "404": _NOT_FOUND,
                    "422": _BAD_ID,
                    "503": _STORE_DOWN,
                },
            },
        },
        STATS: {
            "parameters": [_ID],
            "get": {
                "summary": "Aggregate statistics of a collection",
                "responses": {
                    "200": _json(
                        "Stats",
                        "the aggregate; Cache-Status and Age when a cache served it",
                        **{
                            "Cache-Status": {"schema": {"type": "string"}},
                            "Age": {"schema": {"type": "string"}},
                        },
                    ),
                    "404": _NOT_FOUND,
                    "422": _BAD_ID,
                    "502": _problem("YouTube failed, rejected the request or sent invalid data"),
                    "503": _problem(
                        "YouTube quota exceeded, or storage down", **{"Retry-After": _RETRY_AFTER}
                    ),
                    "504": _problem("YouTube did not answer in time"),
                },
            },
        },
    }


def _path_item(route: Route, path_item: dict[str, Any]) -> dict[str, Any]:
    """The documented operations of one route: exactly the methods it answers.

    HEAD answers like GET, without a body; 500 can happen anywhere, and 400 wherever
    the path holds an id.
    """
    item = dict(path_item)
    documented = {key.upper() for key in item if key != "parameters"}
    if "HEAD" in route.methods and "get" in item:
        documented.add("HEAD")
    if documented != set(route.methods):
        raise AssertionError(f"{route.template}: documented {sorted(documented)}, answers {route.methods}")
    if "HEAD" in route.methods:
        responses = {
            status: {k: v for k, v in response.items() if k != "content"}
            for status, response in item["get"]["responses"].items()
        }
        item["head"] = {"summary": item["get"]["summary"] + " (headers only)", "responses": responses}
    for method in ("get", "head", "put", "delete"):
        if method in item:
            bad_path = {"400": _BAD_PATH} if route.around_parameter is not None else {}
            item[method] = {
                **item[method],
                "responses": {**bad_path, **item[method]["responses"], "500": _problem("a bug")},
            }
    return item


def _videos_schema(max_videos: int) -> dict[str, Any]:
    """The collection body: its ``maxItems`` is the limit the serving service enforces."""
    return {
        "type": "object",
        "required": ["videos"],
        "additionalProperties": False,
        "properties": {
            "videos": {
                "type": "array",
                "maxItems": max_videos,
                "items": {"$ref": "#/components/schemas/VideoId"},
            }
        },
    }


def openapi_spec(max_videos: int = DEFAULT_MAX_VIDEOS) -> dict[str, Any]:
    """The document as a dict: one path per route of ``ROUTES``, one operation per method.

    ``max_videos`` is the limit the service enforces (INFLUENCER_STATS_MAX_VIDEOS), so the
    document states the limit of the service that serves it.
    """
    operations = _operations()
    schemas = {**_SCHEMAS, "Videos": _videos_schema(max_videos)}
    if set(operations) != set(ROUTES):
        raise AssertionError(f"every route is documented, and only those: {set(operations) ^ set(ROUTES)}")
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "influencer-stats",
            "version": "0.1.0",
            "description": "YouTube statistics for collections of videos. Errors are RFC 9457 problems.",
        },
        "paths": {template: _path_item(route, operations[template]) for template, route in ROUTES.items()},
        "components": {
            "schemas": schemas,
            "headers": {
                "X-Request-ID": {
                    "description": "the request's id: the client's X-Request-ID if valid, else a new one",
                    "schema": {"type": "string"},
                }
            },
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }


@cache
def openapi_document(max_videos: int = DEFAULT_MAX_VIDEOS) -> bytes:
    return orjson.dumps(openapi_spec(max_videos))
