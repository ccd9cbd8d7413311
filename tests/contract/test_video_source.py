"""The VideoStatsSource contract, run against every interpreter.

Each source is opened against the same synthetic world (the fake computes
it; networked clients later talk to the YouTube double serving it).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import aiohttp
import httpx
import pytest
from returns.result import Success

from influencer_stats.algebras import VideoStatsSource
from influencer_stats.interpreters.videos.aiohttp_client import AiohttpVideosList
from influencer_stats.interpreters.videos.fake import FakeVideoStatsSource
from influencer_stats.interpreters.videos.httpx_client import HttpxVideosList
from influencer_stats.interpreters.videos.synthetic import synthetic_stats, synthetic_video_id
from influencer_stats.interpreters.videos.youtube_api import VideosListCall
from influencer_stats.interpreters.videos.youtube_source import UpstreamPolicy, YouTubeVideoStatsSource
from influencer_stats.logic.models import VideoBatch, VideoId
from influencer_stats.testing.event_log import CapturingEventLog
from influencer_stats.testing.youtube_double import running_double

SourceFactory = Callable[[], AbstractAsyncContextManager[VideoStatsSource]]


@asynccontextmanager
async def fake_source() -> AsyncIterator[VideoStatsSource]:
    yield FakeVideoStatsSource()


def youtube_source(client: str, ids_per_call: int) -> SourceFactory:
    """A real HTTP client of ``client`` talking to the YouTube double on a real socket."""

    @asynccontextmanager
    async def opened() -> AsyncIterator[VideoStatsSource]:
        async with running_double(require_key=KEY) as double:
            call: VideosListCall
            if client == "httpx":
                async with httpx.AsyncClient() as http:
                    call = HttpxVideosList(http, double.url, KEY)
                    yield _source(call, ids_per_call)
            else:
                async with aiohttp.ClientSession() as session:
                    call = AiohttpVideosList(session, double.url, KEY)
                    yield _source(call, ids_per_call)

    return opened


def _source(call: VideosListCall, ids_per_call: int) -> VideoStatsSource:
    return YouTubeVideoStatsSource(
        call, UpstreamPolicy(ids_per_call=ids_per_call), CapturingEventLog(), clock=time.monotonic
    )


KEY = "contract-test-key"
SOURCES: dict[str, SourceFactory] = {
    "fake": fake_source,
    "httpx": youtube_source("httpx", 1),
    "httpx-batched": youtube_source("httpx", 50),
    "aiohttp": youtube_source("aiohttp", 1),
    "aiohttp-batched": youtube_source("aiohttp", 50),
}


@pytest.fixture(params=list(SOURCES))
async def source(request: pytest.FixtureRequest) -> AsyncIterator[VideoStatsSource]:
    async with SOURCES[request.param]() as opened:
        yield opened


async def test_known_videos_come_back_with_their_statistics(source: VideoStatsSource) -> None:
    ids = [VideoId("-4lB5EKS5Uk"), VideoId("-jlLkTtgWUk")]

    result = await source.fetch(ids)

    assert result == Success(VideoBatch({i: synthetic_stats(i) for i in ids}, ()))


async def test_unknown_videos_are_missing_not_errors(source: VideoStatsSource) -> None:
    known, unknown = VideoId("1FEFpk-uIYo"), VideoId("XXXXXXXXXXX")

    result = await source.fetch([known, unknown])

    assert result == Success(VideoBatch({known: synthetic_stats(known)}, (unknown,)))


async def test_an_empty_request_is_an_empty_batch(source: VideoStatsSource) -> None:
    assert await source.fetch([]) == Success(VideoBatch({}, ()))


async def test_every_id_of_a_large_request_is_accounted_for_exactly_once(source: VideoStatsSource) -> None:
    ids = [synthetic_video_id(n) for n in range(121)] + [VideoId("X1234567890")]

    match await source.fetch(ids):
        case Success(batch):
            assert set(batch.stats) | set(batch.missing) == set(ids)
            assert not set(batch.stats) & set(batch.missing)
            assert batch.missing == (VideoId("X1234567890"),)
            assert all(batch.stats[i] == synthetic_stats(i) for i in batch.stats)
        case other:
            raise AssertionError(other)
