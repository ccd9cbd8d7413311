"""Validation of user input: ids and the collection body.

Pure functions returning ``Result``; the HTTP edge turns an ``InvalidInput``
into a 422 problem naming the field and the offending value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from returns.result import Failure, Result, Success

from influencer_stats.domain.models import CollectionId, VideoId

DEFAULT_MAX_VIDEOS = 5_000  # ids per collection unless the operator sets another limit
# A 1 MiB body holds about 70,000 ids (14 bytes each with quotes and comma): any limit
# above this bound would never be reached, the body limit would answer first.
MAX_VIDEOS_BOUND = 50_000
_COLLECTION_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
# YouTube ids are 11 chars of base64url. Not officially guaranteed, but it
# keeps ',', '&' and '#' out of the upstream query string.
_VIDEO_ID = re.compile(r"[A-Za-z0-9_-]{11}")


@dataclass(frozen=True, slots=True)
class InvalidInput:
    """A field of the request that does not meet the API's rules."""

    field: str
    value: object
    reason: str


@lru_cache(maxsize=4096)  # pure, and on every request's path
def parse_collection_id(raw: str) -> Result[CollectionId, InvalidInput]:
    """A collection id is 1-64 characters of ``[A-Za-z0-9._-]``."""
    if _COLLECTION_ID.fullmatch(raw):
        return Success(CollectionId(raw))
    return Failure(InvalidInput("id", clip(raw), "must be 1-64 characters of A-Z a-z 0-9 . _ -"))


def parse_collection_body(
    document: object, max_videos: int = DEFAULT_MAX_VIDEOS
) -> Result[tuple[VideoId, ...], InvalidInput]:
    """The body must be exactly ``{"videos": [<video id>, ...]}``, at most ``max_videos`` ids."""
    if not isinstance(document, dict):
        return Failure(InvalidInput("body", clip(document), 'must be an object {"videos": [...]}'))
    extra = sorted(key for key in document if key != "videos")
    if extra:
        return Failure(InvalidInput(extra[0], clip(document[extra[0]]), "is not allowed"))
    if "videos" not in document:
        return Failure(InvalidInput("videos", None, "is required"))
    videos = document["videos"]
    if not isinstance(videos, list):
        return Failure(InvalidInput("videos", clip(videos), "must be an array of video ids"))
    if len(videos) > max_videos:
        return Failure(InvalidInput("videos", len(videos), f"must hold at most {max_videos} ids"))
    for index, video in enumerate(videos):
        if not isinstance(video, str) or not _VIDEO_ID.fullmatch(video):
            return Failure(
                InvalidInput(f"videos[{index}]", clip(video), "must be 11 characters of A-Z a-z 0-9 _ -")
            )
    return Success(tuple(VideoId(v) for v in videos))


def clip(value: object, limit: int = 100) -> object:
    """Echo short values as they are; never echo a megabyte back."""
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + "…"
    if isinstance(value, (dict, list)):
        text = repr(value)
        return text if len(text) <= limit else text[:limit] + "…"
    return value
