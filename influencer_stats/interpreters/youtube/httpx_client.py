"""``videos.list`` over httpx."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
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


class HttpxVideosList:
    """``VideosListCall`` on a shared ``httpx.AsyncClient`` (opened by the root), and its
    ``get`` a ``YouTubeGet`` for the other lists.

    The key travels in the ``X-Goog-Api-Key`` header, never in the URL, so no
    URL logged anywhere carries it.
    """

    def __init__(
        self, client: httpx.AsyncClient, base_url: str, api_key: str | None, max_body: int = MAX_BODY_BYTES
    ) -> None:
        self._client = client
        self._base_url = base_url
        self._headers = {API_KEY_HEADER: api_key} if api_key else {}
        self._max_body = max_body

    async def __call__(self, ids: Sequence[VideoId]) -> Result[StatsByVideo, UpstreamError]:
        return answer_of(await self.get(request_url(self._base_url, ids)), self._max_body)

    async def get(self, url: str) -> Result[Answered, UpstreamError]:
        """``YouTubeGet``: one GET of ``url`` on the client, its body read up to the limit."""
        try:
            async with self._client.stream("GET", url, headers=self._headers) as response:
                body = await read_bounded(response.aiter_raw(), self._max_body)
                return Success((response.status_code, body))
        except httpx.TimeoutException as exc:
            return Failure(UpstreamTimeout(f"YouTube call timed out ({type(exc).__name__})"))
        except httpx.TransportError as exc:
            return Failure(UpstreamUnavailable(f"YouTube connection failed ({type(exc).__name__})"))
