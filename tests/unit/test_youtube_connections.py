"""The process's YouTube connections: one pool, of the video client's HTTP library.

A reader of playlists and channels calls on the video client's connections and gate (one pool,
one quota), whichever registered client that is: the YouTube clients' table
(``videos.HTTP_LIBRARIES``) says its library, so a client a slice adds is followed like the
core's. With the fake (no connections of its own) the readers open aiohttp's, the core's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from influencer_stats.bootstrap.videos import HTTP_LIBRARIES, VIDEO_CLIENTS, youtube_connections
from tests.contract.wired import wired
from tests.support import YOUTUBE_CLIENTS

UNUSED = "http://127.0.0.1:9/youtube/v3/videos"  # built, never called


@pytest.mark.parametrize("client", YOUTUBE_CLIENTS)
async def test_the_readers_call_on_the_video_clients_own_connections(tmp_path: Path, client: str) -> None:
    async with wired(tmp_path, {"video_client": client}, youtube_url=UNUSED) as wiring:
        await VIDEO_CLIENTS[client].build(wiring)
        the_clients = await youtube_connections(wiring, HTTP_LIBRARIES[client])

        assert await youtube_connections(wiring) is the_clients  # no second pool, no second gate


def test_every_youtube_client_is_in_the_table_and_the_fake_is_not() -> None:
    assert set(HTTP_LIBRARIES) == set(YOUTUBE_CLIENTS)
    assert "fake" not in HTTP_LIBRARIES


async def test_with_the_fake_the_readers_open_the_cores_aiohttp_connections(tmp_path: Path) -> None:
    async with wired(tmp_path, {"video_client": "fake"}, youtube_url=UNUSED) as wiring:
        connections = await youtube_connections(wiring)

        assert await youtube_connections(wiring, HTTP_LIBRARIES["aiohttp"]) is connections
        assert type(connections[0]).__module__ == "influencer_stats.interpreters.youtube.aiohttp_client"
