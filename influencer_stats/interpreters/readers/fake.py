"""Offline playlists and channels: stable videos derived from each id, no network, no quota."""

from __future__ import annotations

import hashlib
import re
from base64 import urlsafe_b64encode

from returns.result import Failure, Result, Success

from influencer_stats.domain.models import (
    CollectionSource,
    ReadError,
    SourceNotFound,
    SourceTooLarge,
    VideoId,
)

#: How many videos a list whose id does not end in digits holds.
DEFAULT_LENGTH = 12
_TRAILING_DIGITS = re.compile(r"[0-9]{1,9}$")


class FakeSourceReader:
    """``SourceReader`` of the ``fake`` video client: what ``demo`` imports, offline.

    A playlist whose id ends in digits holds that many videos (``PLdemo120``:
    120), any other ``DEFAULT_LENGTH``; each video's id is derived from the
    list's id and its position, so the same list always gives the same
    videos. A channel's uploads are the playlist ``UU`` + the channel id after
    ``UC``, as on YouTube. An id with ``X`` after its two-letter prefix
    (``PLX…``, ``UCX…``) is not found. Calls nothing, spends no quota.
    """

    async def videos(self, source: CollectionSource, limit: int) -> Result[tuple[VideoId, ...], ReadError]:
        if source.id[2:3] == "X":
            return Failure(SourceNotFound(source, f"the fake reader has no {source.kind} {source.id}"))
        playlist = source.id if source.kind == "playlist" else "UU" + source.id[2:]
        digits = _TRAILING_DIGITS.search(playlist)
        length = int(digits.group()) if digits else DEFAULT_LENGTH
        if length > limit:
            return Failure(SourceTooLarge(source, length, limit))
        return Success(tuple(_video(playlist, position) for position in range(length)))


def _video(playlist: str, position: int) -> VideoId:
    digest = hashlib.blake2b(f"{playlist}:{position}".encode(), digest_size=9).digest()
    return VideoId(urlsafe_b64encode(digest).decode()[:11])
