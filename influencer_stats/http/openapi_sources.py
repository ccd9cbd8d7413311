"""The OpenAPI pieces of collections read from a playlist or a channel: what the slice adds to the
core's ``/collections/{id}`` (``COLLECTION_DOC``: the PUT body that names one, the source shown
beside the videos) and ``POST /collections/{id}/refresh``."""

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
from influencer_stats.domain.sources import parse_source_body
from influencer_stats.domain.validation import InvalidInput
from influencer_stats.http import problems
from influencer_stats.http.api import MAX_BODY_BYTES
from influencer_stats.http.openapi_parts import (
    RETRY_AFTER,
    UNAUTHORIZED_REPLY,
    UPSTREAM_FAILED,
    json_response,
    operation,
    problem_response,
)
from influencer_stats.http.problems import Reply
from influencer_stats.http.route_table import CollectionDoc

REFRESH = "/collections/{id}/refresh"

_PLAYLIST = "PLrEnWoR732-BHrPp_Pm8_VleD68f9s14-"
_CHANNEL = "UC_x5XG1OV2P6uZZ5FSM9Ttw"
_SOURCE_IDS = {"playlist": "^[A-Za-z0-9_-]{2,64}$", "channel": "^UC[A-Za-z0-9_-]{22}$"}
_MISSING = SourceNotFound(CollectionSource("playlist", _PLAYLIST), "YouTube answered 404 playlistNotFound")
_TOO_LARGE = SourceTooLarge(CollectionSource("channel", _CHANNEL), 7_412, 5_000)


#: The schemas the slice adds: where a collection is read from.
SCHEMAS: dict[str, Any] = {
    "Source": {
        "type": "object",
        "description": "Where the videos are read from: a playlist, or a channel's uploads.",
        "minProperties": 1,
        "maxProperties": 1,
        "additionalProperties": False,
        "properties": {kind: {"type": "string", "pattern": pattern} for kind, pattern in _SOURCE_IDS.items()},
    },
}


def imported(videos: list[str]) -> dict[str, Any]:
    """The example of a collection just read from its playlist."""
    return {"videos": videos, "source": {"playlist": _PLAYLIST}, "added": 1, "removed": 0}


_SOURCE_INVALID = (
    problems.invalid_input(parse_source_body({"channel": "dQw4w9WgXcQ"}).failure()),
    problems.for_error(_MISSING),
    problems.for_error(_TOO_LARGE),
)
#: What the slice adds to the core's ``/collections/{id}``: a PUT of a playlist or channel, the
#: source a GET shows, the counts a PUT from one answers with.
COLLECTION_DOC = CollectionDoc(
    bodies=("Source",),
    fields={
        "source": {"$ref": "#/components/schemas/Source"},
        "added": {"type": "integer", "minimum": 0, "description": "videos new to it, when just read"},
        "removed": {
            "type": "integer",
            "minimum": 0,
            "description": "videos it no longer holds, when just read",
        },
    },
    examples={
        "playlist": {"summary": "a playlist's videos", "value": {"playlist": _PLAYLIST}},
        "channel": {"summary": "a channel's uploads", "value": {"channel": _CHANNEL}},
    },
    description="A playlist is read a page of 50 at a time (a unit of YouTube quota each), a "
    "channel through its uploads playlist (a unit more); private and deleted videos are left "
    "out. The collection keeps where it was read from: `POST /collections/{id}/refresh` reads "
    "it again. Saving ids forgets it.",
    invalid=_SOURCE_INVALID,
    invalid_text="no such playlist or channel, or one holding more videos than a collection may",
    responses={
        **UPSTREAM_FAILED,
        "201": json_response(
            "Collection",
            "created",
            imported(["dQw4w9WgXcQ", "9bZkp7q19f0", "kJQP7kiw5Fk"]),
            Location={"schema": {"type": "string"}, "example": "/collections/summer-campaign-2024"},
        ),
    },
)


#: A refresh's 422s: a body or id the service refuses, or a playlist it cannot take.
_INVALID = problem_response(
    "a body other than {}, bad id, a key given twice in one object, no such playlist or channel, "
    "or one holding more videos than a collection may",
    problems.invalid_input(InvalidInput("playlist", None, "is not taken: the body is {}")),
    *_SOURCE_INVALID,
)


def operations(collection_id: dict[str, Any], not_found: tuple[Reply, ...]) -> dict[str, Any]:
    """The refresh route's path item, given the id parameter and the not-found replies."""
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
                    "404": problem_response("no such collection", *not_found),
                    "409": problem_response(
                        "the collection was saved as ids, not read from a playlist or channel",
                        problems.for_error(NotFromASource(CollectionId("summer-campaign-2024"))),
                    ),
                    "422": _INVALID,
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
