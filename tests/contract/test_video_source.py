"""The VideoStatsSource contract, run against every registered client and wrapper.

Parametrized from the registries and built by the root's own builders: each
source sees the same synthetic world (the fake computes it; the real clients
talk to the YouTube double serving it over a real socket).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from returns.result import Success

from influencer_stats.algebras import VideoStatsSource
from influencer_stats.bootstrap.root import build_source
from influencer_stats.bootstrap.videos import VIDEO_CACHES, VIDEO_CLIENTS, VIDEO_WRAPPERS
from influencer_stats.domain.models import VideoBatch, VideoId
from influencer_stats.interpreters.videos.synthetic import synthetic_stats, synthetic_video_id
from influencer_stats.testing.youtube_double import running_double
from tests.contract.wired import KEY, wired

#: Every registered client on its own, and every registered wrapper and video cache around the
#: fake and around a real batched client (so the wrappers meet real calls too).
STACKS = (
    [(client, "none", "none") for client in VIDEO_CLIENTS.names()]
    + [
        (client, wrapper, "none")
        for wrapper in VIDEO_WRAPPERS.names()
        for client in ("fake", "aiohttp-batched")
    ]
    + [(client, "none", cache) for cache in VIDEO_CACHES.names() for client in ("fake", "aiohttp-batched")]
)


def _stack_id(client: str, wrappers: str, cache: str) -> str:
    return "+".join(name for name in (client, wrappers, cache) if name != "none")


@pytest.fixture(params=STACKS, ids=[_stack_id(*stack) for stack in STACKS])
async def source(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[VideoStatsSource]:
    client, wrappers, cache = request.param
    flags = {"video_client": client, "video_wrappers": wrappers, "video_cache": cache}
    async with (
        running_double(require_key=KEY) as double,
        wired(tmp_path, flags, youtube_url=double.url) as wiring,
    ):
        yield await build_source(wiring)


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
