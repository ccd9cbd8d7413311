"""The Google API error bodies the double answers with.

Each function returns the JSON object of one error as Google sends it
(``{"error": {"code", "message", "errors", ...}}``); the HTTP status that goes
with it is chosen by :mod:`youtube_double.app`.
"""

from __future__ import annotations

from typing import Final

from youtube_double.listings import MAX_RESULTS
from youtube_double.wire import MAX_IDS_PER_CALL, JsonObject


def error_body(
    code: int,
    message: str,
    *,
    reason: str,
    domain: str = "global",
    status: str | None = None,
    extra: JsonObject | None = None,
    details: list[JsonObject] | None = None,
) -> JsonObject:
    """A Google API error body: ``{"error": {"code", "message", "errors", ...}}``."""
    err: JsonObject = {"message": message, "domain": domain, "reason": reason}
    if extra:
        err.update(extra)
    body: JsonObject = {"code": code, "message": message, "errors": [err]}
    if status is not None:
        body["status"] = status
    if details is not None:
        body["details"] = details
    return {"error": body}


QUOTA_MESSAGE: Final = (
    "The request cannot be completed because you have exceeded your "
    '<a href="/youtube/v3/getting-started#quota">quota</a>.'
)
BAD_KEY_MESSAGE: Final = "API key not valid. Please pass a valid API key."


def quota_body() -> JsonObject:
    """403 quotaExceeded (domain youtube.quota); never worth retrying today."""
    return error_body(403, QUOTA_MESSAGE, reason="quotaExceeded", domain="youtube.quota")


def rate_limit_body() -> JsonObject:
    """403 rateLimitExceeded (domain usageLimits); retry with backoff."""
    return error_body(403, "Rate Limit Exceeded", reason="rateLimitExceeded", domain="usageLimits")


def bad_key_body() -> JsonObject:
    """400 for an invalid key, as Google currently sends it."""
    return error_body(
        400,
        BAD_KEY_MESSAGE,
        reason="badRequest",
        status="INVALID_ARGUMENT",
        details=[
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
                "metadata": {"service": "youtube.googleapis.com"},
            }
        ],
    )


def backend_error_body(code: int) -> JsonObject:
    """500/503 backendError (transient)."""
    return error_body(code, "Backend Error", reason="backendError")


def too_many_body() -> JsonObject:
    """429 Too Many Requests, in the google.rpc RESOURCE_EXHAUSTED style."""
    return error_body(
        429,
        "Resource has been exhausted (e.g. check quota).",
        reason="rateLimitExceeded",
        status="RESOURCE_EXHAUSTED",
    )


def missing_part_body() -> JsonObject:
    """400 for a request without ``part`` (Google's "Required parameter" error)."""
    return error_body(
        400,
        "Required parameter: part",
        reason="required",
        extra={"locationType": "parameter", "location": "part"},
    )


def part_without_statistics_body(part: str) -> JsonObject:
    """400 for a ``part`` that lacks ``statistics`` (a double-only rule)."""
    return error_body(
        400,
        f"Required parameter: part must include statistics (got {part!r})",
        reason="badRequest",
        extra={"locationType": "parameter", "location": "part"},
    )


def no_filter_body(filters: str, location: str) -> JsonObject:
    """400 for a list request without any of its filter parameters (``filters``, as listed)."""
    return error_body(
        400,
        f"No filter selected. Expected one of: {filters}",
        reason="missingRequiredParameter",
        extra={"locationType": "parameter", "location": location},
    )


def missing_id_body() -> JsonObject:
    """400 for a videos.list request without any ``id`` parameter (no filter selected)."""
    return no_filter_body("chart, id, myRating", "id")


def missing_playlist_id_body() -> JsonObject:
    """400 for a playlistItems.list request without ``playlistId`` (nor ``id``)."""
    return no_filter_body("id, playlistId", "playlistId")


def missing_channel_id_body() -> JsonObject:
    """400 for a channels.list request without ``id`` (or another filter the double lacks)."""
    return no_filter_body("categoryId, forHandle, forUsername, id, managedByMe, mine", "id")


PLAYLIST_NOT_FOUND_MESSAGE: Final = (
    "The playlist identified with the request's <code>playlistId</code> parameter cannot be found."
)


def playlist_not_found_body() -> JsonObject:
    """404 playlistNotFound: no such playlist, or one this key may not read (upstream: the same)."""
    return error_body(
        404,
        PLAYLIST_NOT_FOUND_MESSAGE,
        reason="playlistNotFound",
        domain="youtube.playlistItem",
        extra={"location": "playlistId", "locationType": "parameter"},
    )


def invalid_page_token_body() -> JsonObject:
    """400 invalidPageToken: a ``pageToken`` the double did not hand out."""
    return error_body(
        400,
        "The request specifies an invalid page token.",
        reason="invalidPageToken",
        domain="youtube.parameter",
        extra={"location": "pageToken", "locationType": "parameter"},
    )


def invalid_max_results_body(raw: str) -> JsonObject:
    """400 invalidParameter for a ``maxResults`` outside 0..:data:`MAX_RESULTS` (or not a number)."""
    return error_body(
        400,
        f"Invalid value '{raw}'. Values must be within the range: [0, {MAX_RESULTS}]",
        reason="invalidParameter",
        extra={"location": "maxResults", "locationType": "parameter"},
    )


def too_many_ids_body(n: int) -> JsonObject:
    """400 badRequest for more than :data:`MAX_IDS_PER_CALL` ids (upstream: unverified)."""
    return error_body(
        400,
        f"Required parameter: id must list at most {MAX_IDS_PER_CALL} ids (got {n})",
        reason="badRequest",
        status="INVALID_ARGUMENT",
        extra={"locationType": "parameter", "location": "id"},
    )
