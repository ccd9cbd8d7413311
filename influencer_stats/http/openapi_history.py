"""The OpenAPI operations and schemas of a collection's history: ``/history`` and ``/growth``."""

from __future__ import annotations

from typing import Any

from influencer_stats.domain.validation import InvalidInput
from influencer_stats.http import problems
from influencer_stats.http.history_query import (
    GROWTH,
    HISTORY,
    HISTORY_CHART,
    HISTORY_CURSOR_PATTERN,
    STEP_PATTERN,
    parse_history_request,
    query_timeout,
)
from influencer_stats.http.openapi_parts import (
    ETAG,
    IF_NONE_MATCH,
    LINK_NEXT,
    REQUEST_ID,
    RETRY_AFTER,
    STORE_DOWN_REPLY,
    json_response,
    not_modified,
    operation,
    problem_response,
)
from influencer_stats.http.pagination import DEFAULT_LIMIT, MAX_LIMIT
from influencer_stats.http.problems import Reply

_TIME = {"type": "string", "format": "date-time"}
_POINT = {
    "at": "2026-12-04T12:00:00.000Z",
    "impressions": 18760776,
    "engagements": 383586,
    "score": 710585,
    "videos": 3,
    "missing": 0,
    "gap": False,
}
_LATER = {**_POINT, "at": "2026-12-05T12:00:00.000Z", "impressions": 19012044, "engagements": 390120}

SCHEMAS: dict[str, Any] = {
    "Point": {
        "type": "object",
        "description": "A snapshot; a gap is one that was due but not taken (its figures are 0).",
        "required": ["at", "impressions", "engagements", "score", "videos", "missing", "gap"],
        "additionalProperties": False,
        "properties": {
            "at": {**_TIME, "description": "when the figures were true (UTC)"},
            "impressions": {"type": "integer", "minimum": 0},
            "engagements": {"type": "integer", "minimum": 0},
            "score": {"type": "integer", "minimum": 0},
            "videos": {"type": "integer", "minimum": 0},
            "missing": {"type": "integer", "minimum": 0, "description": "ids YouTube did not return"},
            "gap": {"type": "boolean"},
        },
    },
    "History": {
        "type": "object",
        "description": "One page of snapshots, oldest first; next only when more follow.",
        "required": ["points"],
        "additionalProperties": False,
        "properties": {
            "points": {
                "type": "array",
                "maxItems": MAX_LIMIT,
                "items": {"$ref": "#/components/schemas/Point"},
            },
            "next": {"type": "string", "pattern": HISTORY_CURSOR_PATTERN},
        },
    },
    "Change": {
        "type": "object",
        "required": ["absolute", "relative"],
        "additionalProperties": False,
        "properties": {
            "absolute": {"type": "integer"},
            "relative": {
                "type": ["number", "null"],
                "description": "absolute / the first value; null from 0",
            },
        },
    },
    "Growth": {
        "type": "object",
        "required": ["since", "from", "to", "change"],
        "additionalProperties": False,
        "properties": {
            "since": _TIME,
            "from": {"$ref": "#/components/schemas/Point"},
            "to": {"$ref": "#/components/schemas/Point"},
            "change": {
                "type": "object",
                "required": ["impressions", "engagements", "score", "videos"],
                "additionalProperties": False,
                "properties": {
                    name: {"$ref": "#/components/schemas/Change"}
                    for name in ("impressions", "engagements", "score", "videos")
                },
            },
        },
    },
}


def _time_parameter(name: str, description: str, *, required: bool = False) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": required,
        "description": f"{description} (RFC 3339)",
        "schema": _TIME,
        "example": _POINT["at"],
    }


def _range_parameters() -> list[dict[str, Any]]:
    return [
        _time_parameter("since", "the first time wanted; without it, the oldest snapshot"),
        _time_parameter("until", "the first time not wanted; without it, the latest"),
        {
            "name": "step",
            "in": "query",
            "required": False,
            "description": "one snapshot per step (its last that is not a gap): s, m, h or d",
            "schema": {"type": "string", "pattern": STEP_PATTERN},
            "example": "1d",
        },
    ]


def _limit(default: int) -> dict[str, Any]:
    return {
        "name": "limit",
        "in": "query",
        "required": False,
        "description": f"snapshots at most, up to {MAX_LIMIT}",
        "schema": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": default},
        "example": 2,
    }


_CURSOR = {
    "name": "cursor",
    "in": "query",
    "required": False,
    "description": "the previous page's next (opaque); it replaces since",
    "schema": {"type": "string", "pattern": HISTORY_CURSOR_PATTERN},
    "example": "1764936000000",
}
_BAD_QUERY = problem_response(
    "a bad id, a time that is not RFC 3339, a bad step, limit or cursor, or one repeated",
    problems.invalid_input(parse_history_request("step=1w").failure()),
)


_DOWN_OR_SLOW = problem_response(
    "collection storage unavailable, or the query ran past INFLUENCER_STATS_HISTORY_QUERY_TIMEOUT",
    STORE_DOWN_REPLY,
    query_timeout(10.0),
    **{"Retry-After": RETRY_AFTER},
)


def operations(collection_id: dict[str, Any], not_found: tuple[Reply, ...]) -> dict[str, Any]:
    """The two routes' path items, given the collection id parameter and the not-found replies."""
    return {
        HISTORY: {
            "parameters": [collection_id, *_range_parameters(), _limit(DEFAULT_LIMIT), _CURSOR],
            "get": operation(
                "getCollectionHistory",
                "stats",
                "A collection's stats over time, a page at a time",
                description="The same points as a chart: `GET /collections/{id}/history.svg` (e.g. "
                "[the example collection's](/collections/summer-campaign-2024/history.svg)).",
                parameters=[IF_NONE_MATCH],
                responses={
                    "200": json_response(
                        "History",
                        "snapshots, oldest first (and the next page's Link when more follow)",
                        {"points": [_POINT, _LATER]},
                        ETag=ETAG,
                        Link={
                            **LINK_NEXT,
                            "example": '</collections/summer-campaign-2024/history?limit=2&cursor=1764936000000>; rel="next"',
                        },
                    ),
                    "304": not_modified(),
                    "404": problem_response("no such collection", *not_found),
                    "422": _BAD_QUERY,
                    "503": _DOWN_OR_SLOW,
                },
            ),
        },
        HISTORY_CHART: {
            "parameters": [collection_id, *_range_parameters(), _limit(MAX_LIMIT)],
            "get": operation(
                "getCollectionHistoryChart",
                "stats",
                "A collection's stats over time as a chart (SVG, no script)",
                parameters=[IF_NONE_MATCH],
                responses={
                    "200": {
                        "description": "impressions and engagements over time; gaps marked in red",
                        "headers": {"X-Request-ID": REQUEST_ID, "ETag": ETAG},
                        "content": {"image/svg+xml": {"schema": {"type": "string"}}},
                    },
                    "304": not_modified(),
                    "404": problem_response("no such collection", *not_found),
                    "422": _BAD_QUERY,
                    "503": _DOWN_OR_SLOW,
                },
            ),
        },
        GROWTH: {
            "parameters": [collection_id, _time_parameter("since", "compare from here", required=True)],
            "get": operation(
                "getCollectionGrowth",
                "stats",
                "How a collection's figures changed since a time",
                parameters=[IF_NONE_MATCH],
                responses={
                    "200": json_response(
                        "Growth",
                        "the first snapshot at or after since, the last one, and each figure's change",
                        {
                            "since": "2026-12-04T00:00:00.000Z",
                            "from": _POINT,
                            "to": _LATER,
                            "change": {
                                "impressions": {"absolute": 251268, "relative": 0.0134},
                                "engagements": {"absolute": 6534, "relative": 0.017},
                                "score": {"absolute": 0, "relative": 0.0},
                                "videos": {"absolute": 0, "relative": 0.0},
                            },
                        },
                        ETag=ETAG,
                    ),
                    "304": not_modified(),
                    "404": problem_response(
                        "no such collection, or no snapshot of it at or after since",
                        *not_found,
                        problems.problem(
                            404,
                            "no-snapshots",
                            "No snapshots",
                            "collection summer-campaign-2024 has no snapshot at or after 2026-12-04T00:00:00Z",
                        ),
                    ),
                    "422": problem_response(
                        "a bad id, or since missing, repeated or not RFC 3339",
                        problems.invalid_input(InvalidInput("since", None, "is required")),
                    ),
                    "503": _DOWN_OR_SLOW,
                },
            ),
        },
    }
