"""The OpenAPI pieces of collections read from a playlist or a channel: the PUT body that names
one, the collection as it is shown (with its source), and ``POST /collections/{id}/refresh``."""

from __future__ import annotations

from typing import Any

from influencer_stats.domain.models import (
    CollectionId,
    CollectionSource,
    NotFromASource,
    RefreshTooSoon,
    SourceNotFound,
    SourceTooLarge,
)
from influencer_stats.domain.validation import parse_collection_body, parse_put_body
from influencer_stats.http import problems
from influencer_stats.http.api import MAX_BODY_BYTES
from influencer_stats.http.openapi_parts import (
    RETRY_AFTER,
    UNAUTHORIZED_REPLY,
    UPSTREAM_FAILED,
    json_response,
    operation,
    problem_response,
    videos_array,
)
from influencer_stats.http.problems import Reply
from influencer_stats.http.routes import REFRESH

_PLAYLIST = "PLrEnWoR732-BHrPp_Pm8_VleD68f9s14-"
_CHANNEL = "UC_x5XG1OV2P6uZZ5FSM9Ttw"
_SOURCE_IDS = {"playlist": "^[A-Za-z0-9_-]{2,64}$", "channel": "^UC[A-Za-z0-9_-]{22}$"}
_MISSING = SourceNotFound(CollectionSource("playlist", _PLAYLIST), "YouTube answered 404 playlistNotFound")
_TOO_LARGE = SourceTooLarge(CollectionSource("channel", _CHANNEL), 7_412, 5_000)


def schemas(max_videos: int) -> dict[str, Any]:
    """The ``Source``, ``CollectionBody`` (what a PUT takes) and ``Collection`` (what is shown)."""
    return {
        "Source": {
            "type": "object",
            "description": "Where the videos are read from: a playlist, or a channel's uploads.",
            "minProperties": 1,
            "maxProperties": 1,
            "additionalProperties": False,
            "properties": {
                kind: {"type": "string", "pattern": pattern} for kind, pattern in _SOURCE_IDS.items()
            },
        },
        "CollectionBody": {
            "description": "The videos themselves, or the playlist or channel to read them from.",
            "oneOf": [{"$ref": "#/components/schemas/Videos"}, {"$ref": "#/components/schemas/Source"}],
        },
        "Collection": {
            "type": "object",
            "description": "A collection's videos, and where they were read from if they were; "
            "added and removed (by id) when they were just read.",
            "required": ["videos"],
            "additionalProperties": False,
            "properties": {
                "videos": videos_array(max_videos),
                "source": {"$ref": "#/components/schemas/Source"},
                "added": {"type": "integer", "minimum": 0},
                "removed": {"type": "integer", "minimum": 0},
            },
        },
    }


def put_body(videos: list[str]) -> dict[str, Any]:
    """The PUT's request body: ids, a playlist or a channel."""
    return {
        "required": True,
        "content": {
            "application/json": {
                "schema": {"$ref": "#/components/schemas/CollectionBody"},
                "examples": {
                    "videos": {"summary": "the videos themselves", "value": {"videos": videos}},
                    "playlist": {"summary": "a playlist's videos", "value": {"playlist": _PLAYLIST}},
                    "channel": {"summary": "a channel's uploads", "value": {"channel": _CHANNEL}},
                },
            }
        },
    }


def imported(videos: list[str]) -> dict[str, Any]:
    """The example of a collection just read from its playlist."""
    return {"videos": videos, "source": {"playlist": _PLAYLIST}, "added": 1, "removed": 0}


#: A PUT's or refresh's 422s: a body or id the service refuses, or a playlist it cannot take.
INVALID = problem_response(
    "wrong body shape (a refresh's is {}), bad id, a key given twice in one object, too many "
    "videos, no such playlist or channel, or one holding more videos than a collection may",
    problems.invalid_input(parse_collection_body({"videos": ["dQw4w9WgXc"]}).failure()),
    problems.invalid_input(parse_put_body({"channel": "dQw4w9WgXcQ"}).failure()),
    problems.for_error(_MISSING),
    problems.for_error(_TOO_LARGE),
)


def operations(collection_id: dict[str, Any], not_found: Reply) -> dict[str, Any]:
    """The refresh route's path item, given the id parameter and the not-found reply."""
    return {
        REFRESH: {
            "parameters": [collection_id],
            "post": operation(
                "refreshCollection",
                "collections",
                "Read a collection's playlist or channel again",
                description="New uploads join the collection and videos gone from the list leave it; "
                "a unit of YouTube quota a page of 50 (a channel one more). The body is the empty JSON "
                "object, sent as `Content-Type: application/json` (anything else is a 415): a request no "
                "cross-site form can make.",
                security=[{}, {"bearer": []}],
                requestBody={
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {"type": "object", "maxProperties": 0},
                            "example": {},
                        }
                    },
                },
                responses={
                    **UPSTREAM_FAILED,
                    "400": problem_response(
                        "the body is not JSON (an empty body is not) or ended before its Content-Length; "
                        "or the path is not ASCII once percent-decoded",
                        problems.malformed_json("the body is not valid JSON: Input data was truncated"),
                        problems.body_incomplete(),
                        problems.path_not_ascii(),
                    ),
                    "413": problem_response(
                        f"the body is over {MAX_BODY_BYTES} bytes", problems.body_too_large(MAX_BODY_BYTES)
                    ),
                    "415": problem_response(
                        "the request is not sent as Content-Type: application/json",
                        problems.unsupported_media_type(problems.JSON),
                    ),
                    "200": json_response("Collection", "read again", imported(["dQw4w9WgXcQ"])),
                    "401": problem_response(
                        "a write token is set and the request does not carry it", UNAUTHORIZED_REPLY
                    ),
                    "404": problem_response("no such collection", not_found),
                    "409": problem_response(
                        "the collection was saved as ids, not read from a playlist or channel",
                        problems.for_error(NotFromASource(CollectionId("summer-campaign-2024"))),
                    ),
                    "422": INVALID,
                    "429": problem_response(
                        "the source was read less than INFLUENCER_STATS_REFRESH_MIN_INTERVAL ago "
                        "(nothing read); Retry-After says when it may be again",
                        problems.for_error(RefreshTooSoon(CollectionId("summer-campaign-2024"), 42)),
                        **{"Retry-After": RETRY_AFTER},
                    ),
                },
            ),
        }
    }
