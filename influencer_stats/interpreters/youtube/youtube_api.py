"""The YouTube Data API's ``videos.list`` wire format, shared by every HTTP client.

What a client needs to speak ``videos.list`` without knowing which HTTP library
sends it: the request URL, the response parser and the error classifier. Only
the library-specific send lives in each client (``aiohttp_client``; httpx's is a slice's).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated
from urllib.parse import quote

import msgspec
from msgspec.structs import astuple
from returns.result import Failure, Result, Success

from influencer_stats.algebras.youtube import Answered

# Re-exported for tests/unit/test_youtube_api.py; the clients import it from the edge.
from influencer_stats.domain.models import (
    InvalidUpstreamData,
    QuotaExceeded,
    StatsByVideo,
    UpstreamError,
    UpstreamMisconfigured,
    UpstreamUnavailable,
    VideoId,
    VideoStats,
)

#: Google's documented maximum of ids per ``videos.list`` call.
MAX_IDS_PER_CALL = 50
#: A 50-id answer is about 20 KB; anything near this is not a videos.list answer.
MAX_BODY_BYTES = 1024 * 1024
API_KEY_HEADER = "X-Goog-Api-Key"


def request_url(base_url: str, ids: Sequence[VideoId]) -> str:
    """``base?part=statistics&id=a,b,c`` with literal commas, never the key.

    Validated ids need no escaping: one regex over the joined ids (and a comma count, so
    an id holding a comma cannot pass as two) says so, 1 µs for 50 ids instead of 50
    ``quote`` calls; anything else is escaped id by id.
    """
    joined = ",".join(ids)
    if joined.count(",") != len(ids) - 1 or not _URL_SAFE_IDS.fullmatch(joined):
        joined = ",".join(quote(i, safe="-_") for i in ids)
    return base_url + "?part=statistics&id=" + joined


_URL_SAFE_IDS = re.compile(r"[A-Za-z0-9_-]+(?:,[A-Za-z0-9_-]+)*")


#: Every count is below this bound, so no sum overflows what the service serialises (orjson
#: refuses integers of 2**64 or more): a score (engagements + likes) adds 4 counts per video
#: over at most ``MAX_VIDEOS_BOUND`` (50,000) videos, at most 2 * 10**17, far below 2**63.
#: The most viewed video has under 2 * 10**10 views.
MAX_COUNT = 10**12

#: A count as YouTube sends it, a JSON string of ASCII digits ("261734"), or a JSON integer.
#: A string of at most 12 characters is below ``MAX_COUNT``; that its characters are digits
#: is checked after decoding (msgspec's ``pattern`` costs more than the rest of the parse).
_Count = (
    Annotated[str, msgspec.Meta(min_length=1, max_length=len(str(MAX_COUNT - 1)))]
    | Annotated[int, msgspec.Meta(ge=0, lt=MAX_COUNT)]
)
_RENAMED = {
    "views": "viewCount",
    "likes": "likeCount",
    "comments": "commentCount",
    "dislikes": "dislikeCount",
}


class _Statistics(msgspec.Struct, frozen=True, rename=_RENAMED):
    """Named as ``VideoStats``'s fields, so ``msgspec.convert`` builds those in C."""

    views: _Count = 0
    likes: _Count = 0
    comments: _Count = 0
    dislikes: _Count = 0


_NO_STATISTICS = _Statistics()


class _Item(msgspec.Struct):
    id: VideoId
    statistics: _Statistics = _NO_STATISTICS


class _VideoListResponse(msgspec.Struct):
    items: list[_Item] = msgspec.field(default_factory=list)


class _ErrorReason(msgspec.Struct):
    reason: str = ""
    domain: str = ""


class _ErrorBody(msgspec.Struct):
    code: int = 0
    errors: list[_ErrorReason] = msgspec.field(default_factory=list)
    status: str = ""


class _ErrorResponse(msgspec.Struct):
    error: _ErrorBody


_decode_list = msgspec.json.Decoder(_VideoListResponse).decode
_decode_error = msgspec.json.Decoder(_ErrorResponse).decode
_STATS_LIST = list[VideoStats]


def parse_videos_list(body: bytes) -> Result[StatsByVideo, UpstreamError]:
    """Stats by id from a 200 answer; a body we cannot trust is invalid data.

    A count is a JSON integer or a string of 1-12 ASCII digits without a leading zero
    (``"0"`` or ``"261734"``), below ``MAX_COUNT`` either way; an absent count (hidden) is 0.
    Anything else (``null``, ``"1e3"``, ``"-5"``, ``"²"``, ``1.5``, ``true`` ...) makes the
    whole answer invalid, never a partial sum.
    """
    try:
        items = _decode_list(body).items
    except msgspec.DecodeError as exc:  # ValidationError is a subclass
        return Failure(InvalidUpstreamData(f"videos.list body does not parse: {str(exc)[:200]}"))
    statistics = [item.statistics for item in items]
    digits = "".join([c for s in statistics for c in astuple(s) if c.__class__ is str])
    if digits and not (digits.isdigit() and digits.isascii()):
        return Failure(InvalidUpstreamData("videos.list count is not a string of ASCII digits"))
    try:  # lax mode turns the digit strings into ints, in C; it refuses leading zeros
        stats = msgspec.convert(statistics, _STATS_LIST, strict=False, from_attributes=True)
    except msgspec.ValidationError as exc:
        return Failure(InvalidUpstreamData(f"videos.list count is not canonical: {str(exc)[:200]}"))
    return Success(dict(zip([item.id for item in items], stats, strict=True)))


_QUOTA_REASONS = frozenset(
    {"quotaExceeded", "dailyLimitExceeded", "rateLimitExceeded", "userRateLimitExceeded"}
)
_DAILY_REASONS = frozenset({"quotaExceeded", "dailyLimitExceeded"})


def classify_error(status: int, body: bytes) -> UpstreamError:
    """The failure a non-200 answer stands for (the body is parsed if it can be).

    Upstream messages are not echoed: only status and reason, which carry no
    secret and no user data.

    A redirect (3xx) is never followed (the clients would carry the key to the
    ``Location``, a host nobody configured) and is ``UpstreamMisconfigured``:
    ``videos.list`` does not redirect, so a 3xx means ``YOUTUBE_API_URL`` names
    something else (an ``http://`` URL, a moved host, a proxy's login page).
    Asking again gets the same redirect, so it is not transient: never retried,
    and logged loudly once, naming the setting to fix. Its ``Location`` is not
    echoed either.
    """
    if 300 <= status < 400:
        return UpstreamMisconfigured(
            f"YouTube answered {status}, a redirect (not followed: check YOUTUBE_API_URL)"
        )
    try:
        reasons = [r.reason for r in _decode_error(body).error.errors]
    except msgspec.DecodeError:
        reasons = []
    reason = reasons[0] if reasons else "unknown"
    if status == 403 and reason in _QUOTA_REASONS:
        # Daily quota resets at midnight Pacific time; rate limits in seconds.
        retry_after = 3600 if reason in _DAILY_REASONS else 60
        return QuotaExceeded(f"YouTube answered 403 {reason}", retry_after_s=retry_after)
    if status == 429 or status >= 500:
        return UpstreamUnavailable(f"YouTube answered {status} {reason}")
    return UpstreamMisconfigured(f"YouTube answered {status} {reason}")


def answer(status: int, body: bytes | None, limit: int) -> Result[StatsByVideo, UpstreamError]:
    """What one answered call means: stats, a classified error, or an oversized body.

    Only a 200 carries stats; every other status, redirects included, is an error.
    """
    if body is None:
        return Failure(InvalidUpstreamData(f"videos.list body over {limit} bytes"))
    if status != 200:
        return Failure(classify_error(status, body))
    return parse_videos_list(body)


def answer_of(got: Result[Answered, UpstreamError], limit: int) -> Result[StatsByVideo, UpstreamError]:
    """``answer`` of a ``YouTubeGet``'s outcome (its failure as it is)."""
    if not isinstance(got, Success):
        return Failure(got.failure())
    status, body = got.unwrap()
    return answer(status, body, limit)


def is_transient(error: UpstreamError) -> bool:
    """Whether retrying the same call may succeed: 5xx, 429, connection errors."""
    return isinstance(error, UpstreamUnavailable)
