"""The SourceReader contract, run against every registered reader, built by the root's builders.

Each reader sees the same world: the fake computes it from each list's id; the YouTube reader
(on each HTTP library) reads the double, which is given the fake's lists first, over a real
socket. What only YouTube has (private and deleted videos, quota units, faults) is checked
against every YouTube reader below.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from returns.result import Success

from influencer_stats.algebras.sources import SourceReader
from influencer_stats.bootstrap.slices.sources import READERS, build_reader
from influencer_stats.domain.models import (
    CollectionSource,
    InvalidUpstreamData,
    QuotaExceeded,
    SourceNotFound,
    SourceTooLarge,
    UpstreamTimeout,
    UpstreamUnavailable,
    VideoId,
)
from influencer_stats.interpreters.readers.fake import FakeSourceReader
from tests.contract.wired import KEY, wired
from tests.support import ONE_CLIENT_PER_LIBRARY
from youtube_double import RunningDouble, running_double
from youtube_double.state import FaultMode

#: Every registered reader: the fake with the fake client, any other on each HTTP library.
READERS_ON = [
    (name, client)
    for name in READERS.names()
    for client in (("fake",) if name == "fake" else ONE_CLIENT_PER_LIBRARY)
]
YOUTUBE_READERS = [(name, client) for name, client in READERS_ON if name != "fake"]
CHANNEL = "UC" + "k" * 20 + "75"


@dataclass
class World:
    """A reader, and the double it reads (``None`` for the fake, which needs no world)."""

    reader: SourceReader
    double: RunningDouble | None

    async def define(self, *sources: CollectionSource) -> None:
        """Give the double the lists the fake reader derives for ``sources``."""
        if self.double is None:
            return
        for source in sources:
            found = await FakeSourceReader().videos(source, 1_000_000)
            if not isinstance(found, Success):
                continue  # a list the fake does not have: neither has the double
            if source.kind == "playlist":
                self.double.state.set_playlist(source.id, found.unwrap())
            else:
                self.double.state.set_channel(source.id, found.unwrap())

    def calls(self) -> int:
        """playlistItems.list and channels.list calls the double answered (0 for the fake)."""
        if self.double is None:
            return 0
        snapshot = self.double.state.snapshot()
        return int(str(snapshot["playlist_items_calls"])) + int(str(snapshot["channels_calls"]))


async def _world(
    tmp_path: Path, reader: str, client: str, environ: Mapping[str, str]
) -> AsyncIterator[World]:
    flags = {"reader": reader, "video_client": client}
    if client == "fake":
        async with wired(tmp_path, flags, environ=environ) as wiring:
            yield World(await build_reader(wiring), None)
        return
    async with (
        running_double(require_key=KEY, stall_seconds=5.0) as double,
        wired(tmp_path, flags, youtube_url=double.url, environ=environ) as wiring,
    ):
        yield World(await build_reader(wiring), double)


@pytest.fixture(params=READERS_ON, ids=["+".join(p) for p in READERS_ON])
async def world(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[World]:
    reader, client = request.param
    async for built in _world(tmp_path, reader, client, {}):
        yield built


async def test_a_playlists_videos_come_in_its_order_every_page_of_it(world: World) -> None:
    source = CollectionSource("playlist", "PLcontract120")
    await world.define(source)

    read = await world.reader.videos(source, 5_000)

    assert read == await FakeSourceReader().videos(source, 5_000)
    assert len(read.unwrap()) == 120


async def test_a_channels_videos_are_its_uploads(world: World) -> None:
    source = CollectionSource("channel", CHANNEL)
    await world.define(source)

    read = await world.reader.videos(source, 5_000)

    assert read == await FakeSourceReader().videos(source, 5_000) and len(read.unwrap()) == 75


async def test_an_empty_playlist_is_an_empty_list(world: World) -> None:
    source = CollectionSource("playlist", "PLempty0")
    await world.define(source)

    assert await world.reader.videos(source, 5_000) == Success(())


async def test_a_list_longer_than_the_limit_is_refused_with_both_numbers(world: World) -> None:
    source = CollectionSource("playlist", "PLcontract120")
    await world.define(source)

    assert (await world.reader.videos(source, 100)).failure() == SourceTooLarge(source, 120, 100)
    assert world.calls() <= 1  # decided from YouTube's count, on the first page


@pytest.mark.parametrize(
    "source",
    [CollectionSource("playlist", "PLXnothing"), CollectionSource("channel", "UCX" + "n" * 21)],
    ids=["playlist", "channel"],
)
async def test_a_list_youtube_does_not_have_is_not_found(world: World, source: CollectionSource) -> None:
    failure = (await world.reader.videos(source, 5_000)).failure()

    assert isinstance(failure, SourceNotFound) and failure.source == source


# --- what only YouTube has --------------------------------------------------------------------------


@pytest.fixture(params=YOUTUBE_READERS, ids=["+".join(p) for p in YOUTUBE_READERS])
async def youtube(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[World]:
    environ = {"INFLUENCER_STATS_QUOTA_PER_DAY": "4", "INFLUENCER_STATS_UPSTREAM_TIMEOUT": "0.3"}
    reader, client = request.param
    async for built in _world(tmp_path, reader, client, environ):
        yield built


def _double(world: World) -> RunningDouble:
    assert world.double is not None
    return world.double


async def test_private_and_deleted_videos_are_left_out_duplicates_kept(youtube: World) -> None:
    ids = [VideoId(f"video{n:06d}") for n in range(5)]
    _double(youtube).state.set_playlist(
        "PLmixed",
        [ids[0], ids[1], ids[2], ids[0], ids[3], ids[4]],
        private=[ids[1]],
        deleted=[ids[3]],
        unlisted=[ids[4]],
    )

    read = await youtube.reader.videos(CollectionSource("playlist", "PLmixed"), 5_000)

    assert read == Success((ids[0], ids[2], ids[0], ids[4]))


@pytest.mark.parametrize(
    ("mode", "count", "expected"),
    [
        ("quota", 1, QuotaExceeded),
        ("server_error", 3, UpstreamUnavailable),  # a call and its 2 retries
        ("reset", 6, UpstreamUnavailable),
        ("malformed", 1, InvalidUpstreamData),
        ("bad_count", 1, InvalidUpstreamData),
        ("stall", 1, UpstreamTimeout),
        ("loop_token", 2, InvalidUpstreamData),  # the second page names its own token again
    ],
)
async def test_youtube_failing_is_the_failure_the_stats_would_answer(
    youtube: World, mode: FaultMode, count: int, expected: type
) -> None:
    source = CollectionSource("playlist", "PLcontract10")
    await youtube.define(source)
    _double(youtube).state.set_fault(mode, count)

    failed = await youtube.reader.videos(source, 5_000)

    assert isinstance(failed.failure(), expected), failed
    _double(youtube).state.set_fault("none")
    assert await youtube.reader.videos(source, 5_000) == await FakeSourceReader().videos(source, 5_000)
