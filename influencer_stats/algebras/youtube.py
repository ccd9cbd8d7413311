"""One call to the YouTube Data API: ``videos.list``, the step the YouTube source is built of
(quota counted per call, by the ``quota`` slice when installed), the plain GET the readers of
playlists and channels make, and what spends a unit of the day's budget before one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from returns.result import Result

from influencer_stats.domain.models import QuotaExhausted, StatsByVideo, UpstreamError, VideoId


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


class QuotaSpending(Protocol):
    """The process's one spender of the day's units, for calls that are not ``videos.list`` (a
    reader's pages): what the ``quota`` choice built (``Quota.spender``), if it counts any."""

    async def spend(self) -> UpstreamError | None:
        """One unit spent (``None``: make the call), or why none was."""
        ...

    def afford(self, units: int) -> QuotaExhausted | None:
        """``None`` when ``units`` more calls fit in what is left today, else why they do not."""
        ...
