"""``videos.list`` over aiohttp."""

from __future__ import annotations

from collections.abc import Sequence

import aiohttp
from returns.result import Failure, Result, Success

from influencer_stats.algebras.youtube import Answered
from influencer_stats.bounded import read_bounded
from influencer_stats.domain.models import (
    StatsByVideo,
    UpstreamError,
    UpstreamTimeout,
    UpstreamUnavailable,
    VideoId,
)
from influencer_stats.interpreters.youtube.youtube_api import (
    API_KEY_HEADER,
    MAX_BODY_BYTES,
    answer_of,
    request_url,
)


class AiohttpVideosList:
    """``VideosListCall`` on a shared ``aiohttp.ClientSession`` (opened by the root), and its
    ``get`` a ``YouTubeGet`` for the other lists.

    The key travels in the ``X-Goog-Api-Key`` header, never in the URL, and
    redirects are never followed: aiohttp would resend the header to whatever
    host the ``Location`` names. A 3xx is classified like any other answer.
    """

    def __init__(
        self,
        session: aiohttp.ClientSession,
        base_url: str,
        api_key: str | None,
        max_body: int = MAX_BODY_BYTES,
    ) -> None:
        self._session = session
        self._base_url = base_url
        self._headers = {API_KEY_HEADER: api_key} if api_key else {}
        self._max_body = max_body

    async def __call__(self, ids: Sequence[VideoId]) -> Result[StatsByVideo, UpstreamError]:
        return answer_of(await self.get(request_url(self._base_url, ids)), self._max_body)

    async def get(self, url: str) -> Result[Answered, UpstreamError]:
        """``YouTubeGet``: one GET of ``url`` on the session, its body read up to the limit."""
        try:
            async with self._session.get(
                url, headers=self._headers, skip_auto_headers=("User-Agent",), allow_redirects=False
            ) as response:
                body = await read_bounded(
                    response.content.iter_any(), self._max_body, response.content_length
                )
                return Success((response.status, body))
        except aiohttp.ServerTimeoutError:
            return Failure(UpstreamTimeout("YouTube call timed out (ServerTimeoutError)"))
        except aiohttp.ClientError as exc:
            return Failure(UpstreamUnavailable(f"YouTube connection failed ({type(exc).__name__})"))
