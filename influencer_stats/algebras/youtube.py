"""One call to the YouTube Data API: ``videos.list``, the step the YouTube source is built of
(quota counted per call), and the plain GET the readers of playlists and channels make."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from returns.result import Result

from influencer_stats.domain.models import StatsByVideo, UpstreamError, VideoId


class VideosListCall(Protocol):
    """One ``videos.list`` request for at most 50 distinct ids.

    Returns the stats of the ids the API returned (absent ones are simply not
    keys) or the classified failure. Transport errors become
    ``UpstreamUnavailable``; it raises only on cancellation (timeouts are
    applied around it, by the caller).
    """

    async def __call__(self, ids: Sequence[VideoId]) -> Result[StatsByVideo, UpstreamError]: ...


#: An answered call: its HTTP status and its body (``None``: longer than the client reads).
Answered = tuple[int, bytes | None]


class YouTubeGet(Protocol):
    """One GET of a YouTube Data API URL, the key in a header, no redirect followed.

    Returns the status and body of whatever answered (every status, errors
    included, for the caller to classify); transport errors become
    ``UpstreamUnavailable``, a timeout of the client's ``UpstreamTimeout``; it
    raises only on cancellation.
    """

    async def __call__(self, url: str) -> Result[Answered, UpstreamError]: ...


class YouTubeConnections(VideosListCall, Protocol):
    """A client of one HTTP library on the process's pool of YouTube connections: each call is a
    ``videos.list`` request, and ``get`` is the ``YouTubeGet`` the readers of playlists and
    channels make on the same connections."""

    async def get(self, url: str) -> Result[Answered, UpstreamError]: ...
