"""RFC 9457 problem responses: every error maps to exactly one, in one place.

Both servers answer through this module, so a given failure produces the same
status, headers and body whichever server runs.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import orjson

from influencer_stats.domain.models import (
    CollectionNotFound,
    ImportFailure,
    InvalidUpstreamData,
    NotFromASource,
    QuotaExceeded,
    QuotaExhausted,
    RefreshTooSoon,
    SharedStateUnavailable,
    ShareSpent,
    SourceNotFound,
    SourceTooLarge,
    StatsError,
    StoreUnavailable,
    UpstreamBusy,
    UpstreamMisconfigured,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from influencer_stats.domain.validation import InvalidInput

PROBLEM_JSON = "application/problem+json"
JSON = "application/json"
_TYPE = "urn:influencer-stats:problem:"
#: The statuses whose answers have no content, so no Content-Type nor Content-Length either
#: (RFC 9110 8.6, 15.3.5, 15.4.5): every server writes their headers without those two.
BODILESS = frozenset({204, 304})


class Reply(NamedTuple):
    """A complete HTTP response, independent of any server framework (cheap to create)."""

    status: int
    body: bytes = b""
    content_type: str = JSON
    headers: tuple[tuple[str, str], ...] = ()


def problem(
    status: int,
    slug: str,
    title: str,
    detail: str,
    *,
    headers: tuple[tuple[str, str], ...] = (),
    **extensions: object,
) -> Reply:
    """A problem+json reply; ``extensions`` become extra members."""
    document: dict[str, object] = {
        "type": _TYPE + slug,
        "title": title,
        "status": status,
        "detail": detail,
        **extensions,
    }
    return Reply(status, orjson.dumps(document), PROBLEM_JSON, headers)


def malformed_json(detail: str) -> Reply:
    return problem(400, "malformed-json", "Malformed JSON", detail)


def _json_safe(value: object) -> object:
    """Echo a value only as JSON can carry it (orjson refuses ints beyond 64 bits)."""
    if value is None or isinstance(value, (str, bool, float)):
        return value
    if isinstance(value, int) and -(2**63) <= value < 2**64:
        return value
    text = str(value)
    return text if len(text) <= 100 else text[:100] + "…"


def invalid_input(error: InvalidInput) -> Reply:
    value = _json_safe(error.value)
    return problem(
        422,
        "validation-error",
        "Invalid request",
        f"{error.field} {error.reason} (got {value!r})",
        field=error.field,
        value=value,
    )


def unsupported_media_type(expected: str) -> Reply:
    """415: the request's Content-Type is not the one the route takes."""
    return problem(
        415,
        "unsupported-media-type",
        "Unsupported media type",
        f"the body must be sent as Content-Type: {expected}",
    )


def body_too_large(limit: int) -> Reply:
    return problem(413, "body-too-large", "Request body too large", f"the body must be at most {limit} bytes")


def route_not_found(path: str) -> Reply:
    return problem(404, "route-not-found", "Not found", f"no route matches {path[:200]!r}")


def method_not_allowed(method: str, allowed: tuple[str, ...]) -> Reply:
    return problem(
        405,
        "method-not-allowed",
        "Method not allowed",
        f"{method[:20]} is not allowed here; use {', '.join(allowed)}",
        headers=(("allow", ", ".join(allowed)),),
    )


def unknown_method(method: str) -> Reply:
    """A method outside HTTP's registry, refused as the C parsers of uvicorn and aiohttp refuse it."""
    return problem(400, "unknown-method", "Unknown method", f"{method[:20]!r} is not an HTTP method")


def path_not_ascii() -> Reply:
    """A path holding a character outside ASCII once percent-decoded (no route or id has one)."""
    return problem(400, "invalid-path", "Invalid path", "the path must be ASCII once percent-decoded")


def body_incomplete() -> Reply:
    """The client sent less than it declared and went away; nothing was stored."""
    return problem(
        400, "incomplete-body", "Incomplete request body", "the body ended before its declared length"
    )


def timeout(part: str, seconds: float) -> Reply:
    """408: the request's ``part`` (``header`` or ``body``) did not arrive in time; the connection closes."""
    return problem(
        408,
        f"{part}-timeout",
        f"Request {part} timeout",
        f"the {part}{'s' if part == 'header' else ''} did not arrive within {seconds:g} s",
        headers=(("connection", "close"),),
    )


def internal_error() -> Reply:
    return problem(
        500, "internal-error", "Internal server error", "an unexpected error occurred; it has been logged"
    )


def for_error(error: StatsError | ImportFailure) -> Reply:
    """The one mapping from a domain or upstream failure to a response."""
    match error:
        case SourceNotFound(source=source, detail=detail):
            return problem(
                422,
                "source-not-found",
                f"No such {source.kind}",
                f"YouTube has no {source.kind} {source.id!r} this service can read ({detail})",
                source={source.kind: source.id},
            )
        case SourceTooLarge(source=source, videos=videos, limit=limit):
            return problem(
                422,
                "source-too-large",
                f"The {source.kind} holds too many videos",
                f"{source.kind} {source.id!r} holds {videos:,} videos; a collection holds at most {limit:,}",
                source={source.kind: source.id},
                videos=videos,
                limit=limit,
            )
        case NotFromASource(id=collection_id):
            return problem(
                409,
                "not-from-a-source",
                "Nothing to refresh from",
                f"collection {collection_id!r} was saved as a list of ids, not from a playlist or channel",
            )
        case RefreshTooSoon(id=collection_id, retry_after_s=retry_after):
            return problem(
                429,
                "refresh-too-soon",
                "Refreshed too recently",
                f"collection {collection_id!r} was read from its source less than the refresh "
                f"interval ago; nothing was read (it may be again in {retry_after} s)",
                headers=(("retry-after", str(retry_after)),),
            )
        case CollectionNotFound(id=collection_id):
            return problem(
                404, "collection-not-found", "Collection not found", f"no collection has id {collection_id!r}"
            )
        case StoreUnavailable(detail=detail):
            return problem(
                503,
                "store-unavailable",
                "Collection storage unavailable",
                detail,
                headers=(("retry-after", "1"),),
            )
        case QuotaExceeded(detail=detail, retry_after_s=retry_after):
            return problem(
                503,
                "upstream-quota-exceeded",
                "YouTube quota exceeded",
                detail,
                headers=(("retry-after", str(retry_after)),),
            )
        case ShareSpent(detail=detail, retry_after_s=retry_after):  # a QuotaExhausted: first
            return problem(
                429,
                "share-spent",
                "This client's share of YouTube units is spent",
                detail,
                headers=(("retry-after", str(retry_after)),),
            )
        case QuotaExhausted(detail=detail, retry_after_s=retry_after):
            return problem(
                503,
                "quota-exhausted",
                "Daily YouTube quota spent",
                detail,
                headers=(("retry-after", str(retry_after)),),
            )
        case UpstreamMisconfigured(detail=detail):
            return problem(502, "upstream-misconfigured", "YouTube rejected the service's request", detail)
        case UpstreamUnavailable(detail=detail):
            return problem(502, "upstream-unavailable", "YouTube unavailable", detail)
        case UpstreamTimeout(detail=detail):
            return problem(504, "upstream-timeout", "YouTube timed out", detail)
        case InvalidUpstreamData(detail=detail):
            return problem(502, "upstream-invalid-response", "YouTube sent an invalid response", detail)
        case UpstreamBusy(detail=detail):
            return problem(
                503,
                "upstream-busy",
                "Too many YouTube calls waiting",
                detail,
                headers=(("retry-after", "1"),),
            )
        case SharedStateUnavailable(detail=detail):
            return problem(
                503,
                "shared-state-unavailable",
                "Shared state unavailable",
                detail,
                headers=(("retry-after", "1"),),
            )


#: Printable ASCII but space and comma, four or more: the pieces of a credential worth masking.
_PRINTABLE_RUN = re.compile(r"[!-+\--~]{4,}")


def error_text(exc: Exception, presented: str | None) -> str:
    """A bug as the log shows it: type and message, clipped, without what the client presented.

    ``str``, not ``repr``: a ``UnicodeError``'s repr holds the whole input it failed
    on (a header value), its ``str`` one character. A message may still quote
    client input: every run of four or more printable characters of the presented
    Authorization value is masked before clipping, whatever surrounds or escapes
    it (the log's redaction masks known secrets and ``Bearer`` values besides).
    """
    text = f"{type(exc).__name__}: {exc}"
    if presented:
        for part in sorted(set(_PRINTABLE_RUN.findall(presented)), key=len, reverse=True):
            text = text.replace(part, "***")
    return text if len(text) <= 300 else text[:300] + "…"
