"""The videos.list wire format: the path, the id rules and the success body.

:func:`render_videos_list` is the single producer of a successful response
body; :mod:`youtube_double.nginx_double` uses it to pre-render its
static files, so the Python and nginx doubles cannot drift apart.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from hashlib import blake2b
from typing import Any, Final

from influencer_stats.interpreters.videos.synthetic import is_unknown, synthetic_stats

VIDEOS_PATH: Final = "/youtube/v3/videos"
"""Path of videos.list, as on www.googleapis.com."""

MAX_IDS_PER_CALL: Final = 50
"""More ids than this in one call are answered with 400 badRequest."""

JsonObject = dict[str, Any]


def etag(*parts: str) -> str:
    """A deterministic, opaque etag (real ones are opaque too)."""
    digest = blake2b("\x00".join(parts).encode(), digest_size=12).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def requested_ids(ids: Sequence[str]) -> list[str]:
    """The distinct non-empty ids, first occurrence first."""
    return list(dict.fromkeys(i for i in ids if i))


def videos_list_response(ids: Sequence[str]) -> JsonObject:
    """The videos.list response (``part=statistics``) for these ids, as a dict.

    Unknown ids are absent, a repeated id appears once, the order is the
    requested one, counts are JSON strings, and ``dislikeCount`` is present only
    when the synthetic dislikes are positive (as for an owner-authorised call).
    """
    items: list[JsonObject] = []
    for vid in requested_ids(ids):
        if is_unknown(vid):
            continue
        s = synthetic_stats(vid)
        statistics: dict[str, str] = {
            "viewCount": str(s.views),
            "likeCount": str(s.likes),
        }
        if s.dislikes > 0:
            statistics["dislikeCount"] = str(s.dislikes)
        statistics["favoriteCount"] = "0"
        statistics["commentCount"] = str(s.comments)
        items.append(
            {
                "kind": "youtube#video",
                "etag": etag("video", vid),
                "id": vid,
                "statistics": statistics,
            }
        )
    return {
        "kind": "youtube#videoListResponse",
        "etag": etag("list", *(str(item["id"]) for item in items)),
        "pageInfo": {"totalResults": len(items), "resultsPerPage": len(items)},
        "items": items,
    }


def dump_json(obj: object) -> bytes:
    """Compact UTF-8 JSON, the single serialisation both doubles use."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def render_videos_list(ids: Sequence[str]) -> bytes:
    """The exact response body the doubles serve for a request of these ids."""
    return dump_json(videos_list_response(ids))
