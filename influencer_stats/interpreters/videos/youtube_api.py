"""The YouTube Data API's ``videos.list`` wire format, shared by every HTTP client.

What a client needs to speak ``videos.list`` without knowing which HTTP library
sends it: the request URL, the response parser and the error classifier. Only
the library-specific send lives in ``httpx_client`` / ``aiohttp_client``.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from typing import Annotated, Protocol
from urllib.parse import quote

import msgspec
from returns.result import Failure, Result, Success

from influencer_stats.logic.models import (
    InvalidUpstreamData,
    QuotaExceeded,
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

StatsByVideo = dict[VideoId, VideoStats]


class VideosListCall(Protocol):
    """One ``videos.list`` request for at most 50 distinct ids.

    Returns the stats of the ids the API returned (absent ones are simply not
    keys) or the classified failure. Transport errors become
    ``UpstreamUnavailable``; it raises only on cancellation (timeouts are
    applied around it, by the caller).
    """

    async def __call__(self, ids: Sequence[VideoId]) -> Result[StatsByVideo, UpstreamError]: ...


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


#: A count: YouTube sends a JSON string of digits ("261734"); an integer is taken too.
#: The decoder runs in msgspec's lax mode, which turns a string into an int only when it
#: denotes one exactly ("1e3" is 1000; "1.5", "-5", "abc", "nan", "²" are errors) and does
#: it in C: this parser runs for every 50 ids of every uncached request.
_Count = Annotated[int, msgspec.Meta(ge=0)] | None


class _Statistics(msgspec.Struct, frozen=True):
    viewCount: _Count = None  # noqa: N815 - the API's field names
    likeCount: _Count = None  # noqa: N815
    commentCount: _Count = None  # noqa: N815
    dislikeCount: _Count = None  # noqa: N815


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


_decode_list = msgspec.json.Decoder(_VideoListResponse, strict=False).decode
_decode_error = msgspec.json.Decoder(_ErrorResponse).decode


def parse_videos_list(body: bytes) -> Result[StatsByVideo, UpstreamError]:
    """Stats by id from a 200 answer; a body we cannot trust is invalid data."""
    try:
        items = _decode_list(body).items
    except msgspec.DecodeError as exc:  # ValidationError is a subclass
        return Failure(InvalidUpstreamData(f"videos.list body does not parse: {str(exc)[:200]}"))
    return Success(
        {
            item.id: VideoStats(
                (stats := item.statistics).viewCount or 0,
                stats.likeCount or 0,
                stats.commentCount or 0,
                stats.dislikeCount or 0,
            )
            for item in items
        }
    )


_QUOTA_REASONS = frozenset(
    {"quotaExceeded", "dailyLimitExceeded", "rateLimitExceeded", "userRateLimitExceeded"}
)
_DAILY_REASONS = frozenset({"quotaExceeded", "dailyLimitExceeded"})


def classify_error(status: int, body: bytes) -> UpstreamError:
    """The failure a non-200 answer stands for (the body is parsed if it can be).

    Upstream messages are not echoed: only status and reason, which carry no
    secret and no user data.
    """
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


async def read_bounded(chunks: AsyncIterator[bytes], limit: int) -> bytes | None:
    """The whole body, or None as soon as it passes ``limit`` bytes."""
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


def answer(status: int, body: bytes | None, limit: int) -> Result[StatsByVideo, UpstreamError]:
    """What one answered call means: stats, a classified error, or an oversized body."""
    if body is None:
        return Failure(InvalidUpstreamData(f"videos.list body over {limit} bytes"))
    if status != 200:
        return Failure(classify_error(status, body))
    return parse_videos_list(body)


def is_transient(error: UpstreamError) -> bool:
    """Whether retrying the same call may succeed: 5xx, 429, connection errors."""
    return isinstance(error, UpstreamUnavailable)
