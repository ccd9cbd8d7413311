"""The httpx YouTube client (the ``httpx_clients`` slice), on httpx's mock transport: no network.

What the shared suites cannot see from outside: where the key travels, the body read up to its
limit and never past it, and httpx's own exceptions turned into the classified failures.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx
from returns.result import Failure, Success

from influencer_stats.domain.models import (
    InvalidUpstreamData,
    UpstreamTimeout,
    UpstreamUnavailable,
    VideoId,
    VideoStats,
)
from influencer_stats.interpreters.youtube.httpx_client import HttpxVideosList
from influencer_stats.interpreters.youtube.youtube_api import API_KEY_HEADER

URL = "http://youtube.test/youtube/v3/videos"
A, B = VideoId("a" * 11), VideoId("b" * 11)
KEY = "sk-httpx-2b7e"


def _client(
    handler: Callable[[httpx.Request], httpx.Response], *, max_body: int = 1 << 20
) -> HttpxVideosList:
    return HttpxVideosList(httpx.AsyncClient(transport=httpx.MockTransport(handler)), URL, KEY, max_body)


def _streamed(body: bytes) -> httpx.Response:
    """An answer read from its stream, as from the network (``content=`` would be read already)."""
    return httpx.Response(200, stream=httpx.ByteStream(body))


async def test_the_key_travels_in_a_header_and_the_ids_in_one_call() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return _streamed(
            b'{"items": [{"id": "%s", "statistics": {"viewCount": "7", "likeCount": 2}}]}' % A.encode()
        )

    got = await _client(answer)([A, B])

    assert got == Success({A: VideoStats(views=7, likes=2)})  # B absent: simply not a key
    assert len(seen) == 1
    assert seen[0].headers[API_KEY_HEADER] == KEY
    assert KEY not in str(seen[0].url)
    assert seen[0].url.params["id"] == f"{A},{B}"


async def test_a_body_over_the_limit_is_not_read_past_it() -> None:
    big = b'{"items": [' + b" " * 4096 + b"]}"

    got = await _client(lambda _: _streamed(big), max_body=1024)([A])

    assert isinstance(got, Failure) and isinstance(got.failure(), InvalidUpstreamData)
    assert "over 1024 bytes" in got.failure().detail


async def test_a_timeout_and_a_refused_connection_are_classified_by_httpx_s_exceptions() -> None:
    def times_out(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    def refuses(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    timed_out = await _client(times_out)([A])
    refused = await _client(refuses).get(URL)

    assert timed_out == Failure(UpstreamTimeout("YouTube call timed out (ReadTimeout)"))
    assert refused == Failure(UpstreamUnavailable("YouTube connection failed (ConnectError)"))
