"""The parts the OpenAPI document is built of, and the problem responses operations share.

The title and version, a JSON response, a problem response (its examples are
replies the service builds, so they read as the service answers), an
operation. ``openapi_operations`` describes each route with them and
``openapi`` assembles the document.
"""

from __future__ import annotations

from typing import Any

import orjson

from influencer_stats.domain.models import (
    QuotaExceeded,
    SharedStateUnavailable,
    StoreUnavailable,
    UpstreamBusy,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from influencer_stats.domain.validation import parse_collection_id
from influencer_stats.http import problems
from influencer_stats.http.problems import Reply

TITLE = "influencer-stats"
PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}
REQUEST_ID = {"$ref": "#/components/headers/X-Request-ID"}
RETRY_AFTER = {"schema": {"type": "string"}, "description": "seconds to wait"}
#: The validator of an answer (``conditional``), its request header and the 304 it earns.
ETAG = {
    "schema": {"type": "string"},
    "description": "the answer's strong entity tag (RFC 9110 8.8.3), a hash of its body: send it back "
    "in If-None-Match to be answered 304 while the answer is unchanged",
    "example": '"5d8f2c3b9a1e4f6070b1c2d3e4f5a6b7"',
}
IF_NONE_MATCH = {
    "name": "If-None-Match",
    "in": "header",
    "required": False,
    "description": "the ETag of the answer the client holds (weak or strong, a list, or *): "
    "while it is still the answer, a 304 without a body",
    "schema": {"type": "string"},
    "example": '"5d8f2c3b9a1e4f6070b1c2d3e4f5a6b7"',
}
#: RFC 8288 ``Link`` to the next page of a paged list (``pagination.next_link``).
LINK_NEXT = {
    "schema": {"type": "string"},
    "description": "the next page's address, rel=\"next\" (RFC 8288): only when more follow, as the body's next",
}


def not_modified(**headers: Any) -> dict[str, Any]:
    """The 304 of a GET whose If-None-Match names the answer: no body, its ETag and ``headers``."""
    return {
        "description": "not modified: the answer is the one the client holds (If-None-Match); no body",
        "headers": {"ETag": ETAG, "X-Request-ID": REQUEST_ID, **headers},
    }


def _document(reply: Reply) -> Any:
    return orjson.loads(reply.body)


def _camel(slug: str) -> str:
    first, *rest = slug.split("-")
    return first + "".join(word.capitalize() for word in rest)


def json_response(schema: str, description: str, example: Any, **headers: Any) -> dict[str, Any]:
    """A JSON response of the component ``schema``, with its example and any ``headers``."""
    return {
        "description": description,
        "headers": {"X-Request-ID": REQUEST_ID, **headers},
        "content": {
            "application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}, "example": example}
        },
    }


def problem_response(description: str, *examples: Reply, **headers: Any) -> dict[str, Any]:
    """A problem response; ``examples`` are replies the service builds, named by their type."""
    documents = [_document(reply) for reply in examples]
    return {
        "description": description,
        "headers": {"X-Request-ID": REQUEST_ID, **headers},
        "content": {
            "application/problem+json": {
                "schema": PROBLEM_REF,
                "examples": {
                    _camel(document["type"].rpartition(":")[2]): {
                        "summary": document["title"],
                        "value": document,
                    }
                    for document in documents
                },
            }
        },
    }


def videos_array(max_videos: int) -> dict[str, Any]:
    """A collection's videos: its ``maxItems`` is the limit the serving service enforces."""
    return {"type": "array", "maxItems": max_videos, "items": {"$ref": "#/components/schemas/VideoId"}}


def operation(operation_id: str, tag: str, summary: str, **rest: Any) -> dict[str, Any]:
    return {"operationId": operation_id, "tags": [tag], "summary": summary, **rest}


# The problem responses several operations share.
STORE_DOWN_REPLY = problems.for_error(StoreUnavailable("store: TimeoutError: no answer in time"))
STORE_DOWN = problem_response(
    "collection storage unavailable", STORE_DOWN_REPLY, **{"Retry-After": RETRY_AFTER}
)
BAD_ID = problem_response(
    "invalid collection id", problems.invalid_input(parse_collection_id("summer campaign!").failure())
)
BAD_PATH = problem_response("the path is not ASCII once percent-decoded", problems.path_not_ascii())
UNAUTHORIZED_REPLY = problems.problem(
    401, "unauthorized", "Unauthorized", "writes need the header Authorization: Bearer <token>"
)
#: The day's budget of YouTube units (INFLUENCER_STATS_QUOTA_*) is spent: the service's own 503.
QUOTA_EXHAUSTED_EXAMPLE = problems.problem(
    503,
    "quota-exhausted",
    "Daily YouTube quota spent",
    "the day's budget of 10000 YouTube quota units is spent and no cached answer is held",
    headers=(("retry-after", "3600"),),
)
#: The responses of an operation that calls YouTube (the stats, a read of a playlist or channel)
#: when YouTube, the quota or the storage fails.
UPSTREAM_FAILED = {
    "502": problem_response(
        "YouTube failed, rejected the request or sent invalid data",
        problems.for_error(UpstreamUnavailable("YouTube answered 500 backendError")),
    ),
    "503": problem_response(
        "YouTube's quota exceeded (upstream-quota-exceeded), this deployment's daily "
        "YouTube budget spent (quota-exhausted), too many YouTube calls waiting in this "
        "process (upstream-busy), the shared quota count not answering "
        "(shared-state-unavailable), or storage down; Retry-After says when to retry",
        problems.for_error(QuotaExceeded("YouTube answered 403 quotaExceeded", 60)),
        QUOTA_EXHAUSTED_EXAMPLE,
        problems.for_error(UpstreamBusy("2048 YouTube calls are waiting for a connection")),
        problems.for_error(
            SharedStateUnavailable("the shared quota count did not answer; no YouTube call was made")
        ),
        STORE_DOWN_REPLY,
        **{"Retry-After": RETRY_AFTER},
    ),
    "504": problem_response(
        "YouTube did not answer in time",
        problems.for_error(UpstreamTimeout("no complete answer within the 10s deadline")),
    ),
}
