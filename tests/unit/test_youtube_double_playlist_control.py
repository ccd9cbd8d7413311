"""Defining the double's playlists and channels over real sockets: control API, bounds, reset, counters.

The ``yt`` (a running double) and ``session`` (an aiohttp client) fixtures are in
``conftest.py``, the request helpers in ``youtube_double_support.py``.
"""

from __future__ import annotations

import io
import json

import aiohttp
import pytest

from tests.unit.youtube_double_support import get_channels, get_playlist_items, get_videos, ids, stats
from youtube_double import (
    MAX_HELD_ENTRIES,
    MAX_PLAYLIST_VIDEOS,
    MAX_PLAYLISTS,
    DoubleState,
    RunningDouble,
    define_playlist,
    page_token,
)

pytestmark = pytest.mark.asyncio

PLAYLIST = "PLdoubleTest0123456789"
CHANNEL = "UCdoubleChannel0123456789"
UPLOADS = "UUdoubleChannel0123456789"


@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("playlists", ["PL1"]),
        ("playlists", {"videos": ids(1)}),
        ("playlists", {"id": "PL1"}),
        ("playlists", {"id": "P", "videos": ids(1)}),
        ("playlists", {"id": "PL 1", "videos": ids(1)}),
        ("playlists", {"id": "PL1", "videos": "AAAAAAAAAAA"}),
        ("playlists", {"id": "PL1", "videos": ["short"]}),
        ("playlists", {"id": "PL1", "videos": [12345678901]}),
        ("playlists", {"id": "PL1", "videos": ids(2), "private": ids(1, start=5)}),
        ("playlists", {"id": "PL1", "videos": ids(2), "private": ids(1), "deleted": ids(1)}),
        ("playlists", {"id": "PL1", "videos": ids(2), "deleted": "x"}),
        ("playlists", {"id": "PL1", "videos": ["AAAAAAAAAAA"] * (MAX_PLAYLIST_VIDEOS + 1)}),
        ("channels", {"id": "PL1", "uploads": ids(1)}),
        ("channels", {"id": "UC", "uploads": ids(1)}),
        ("channels", {"id": CHANNEL}),
        ("channels", {"id": CHANNEL, "uploads": ["bad"]}),
        ("channels", {"id": CHANNEL, "uploads": {"a": 1}}),
        ("channels", "not json at all"),
    ],
)
async def test_control_rejects_bad_definitions(
    yt: RunningDouble, session: aiohttp.ClientSession, route: str, body: object
) -> None:
    raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    # A stream: aiohttp warns about a body over 1 MiB given as bytes (the longest one is).
    async with session.post(f"{yt.base}/_control/{route}", data=io.BytesIO(raw)) as resp:
        assert resp.status == 400
        assert isinstance((await resp.json())["error"], str)
    snapshot = await stats(session, yt)
    assert (snapshot["playlists_held"], snapshot["channels_held"]) == (0, 0)


async def test_the_largest_playlist_is_accepted(yt: RunningDouble, session: aiohttp.ClientSession) -> None:
    videos = ["AAAAAAAAAAA"] * MAX_PLAYLIST_VIDEOS

    answer = await define_playlist(session, yt.base, PLAYLIST, videos)
    status, body = await get_playlist_items(session, yt, PLAYLIST, page_token=page_token(99_998))

    assert answer == {"id": PLAYLIST, "entries": MAX_PLAYLIST_VIDEOS}
    assert status == 200
    assert len(json.loads(body)["items"]) == 2
    with pytest.raises(ValueError, match="at most"):
        await define_playlist(session, yt.base, PLAYLIST, [*videos, videos[0]])


async def test_bounds_on_playlists_and_entries() -> None:
    state = DoubleState()
    for n in range(MAX_PLAYLISTS):
        state.set_playlist(f"PL{n}", ids(1))
    state.set_playlist("PL0", ids(2))  # replacing one is not one more
    with pytest.raises(ValueError, match="playlists"):
        state.set_playlist("PLoneMore", ids(1))
    with pytest.raises(ValueError, match="playlists"):
        state.set_channel(CHANNEL, ids(1))  # its uploads playlist would be one more

    state.reset()
    full = ["AAAAAAAAAAA"] * MAX_PLAYLIST_VIDEOS
    for n in range(MAX_HELD_ENTRIES // MAX_PLAYLIST_VIDEOS):
        state.set_playlist(f"PL{n}", full)
    with pytest.raises(ValueError, match="entries in all"):
        state.set_playlist("PLoneMore", ids(1))
    state.set_playlist("PL0", ids(1))  # a replaced playlist's entries no longer count
    state.set_playlist("PLoneMore", ids(1))


async def test_reset_forgets_playlists_channels_and_their_counters(
    yt: RunningDouble, session: aiohttp.ClientSession
) -> None:
    yt.state.set_playlist(PLAYLIST, ids(2))
    yt.state.set_channel(CHANNEL, ids(2))
    await get_playlist_items(session, yt, PLAYLIST)
    await get_channels(session, yt, CHANNEL)

    async with session.post(f"{yt.base}/_control/reset") as resp:
        assert resp.status == 200
    playlist = await get_playlist_items(session, yt, PLAYLIST)
    channel = json.loads((await get_channels(session, yt, CHANNEL))[1])
    snapshot = await stats(session, yt)

    assert playlist[0] == 404
    assert "items" not in channel
    assert (snapshot["playlists_held"], snapshot["channels_held"]) == (0, 0)
    assert (snapshot["playlist_items_calls"], snapshot["channels_calls"]) == (1, 1)  # the two after reset
    assert snapshot["playlist_items_asked"] == [{"playlistId": PLAYLIST, "pageToken": None}]


async def test_each_endpoint_counts_its_own_calls(yt: RunningDouble, session: aiohttp.ClientSession) -> None:
    a, b = ids(2)
    yt.state.set_channel(CHANNEL, [a, b])
    await get_videos(session, yt, f"{a},{b}")
    await get_playlist_items(session, yt, UPLOADS)
    await get_playlist_items(session, yt, "PLnoSuchList")
    await get_channels(session, yt, f"{CHANNEL},UCother")

    snapshot = await stats(session, yt)

    assert (snapshot["calls"], snapshot["ids_requested"], snapshot["batches"]) == (1, 2, [[a, b]])
    assert snapshot["playlist_items_calls"] == 2
    assert [asked["playlistId"] for asked in snapshot["playlist_items_asked"]] == [UPLOADS, "PLnoSuchList"]
    assert (snapshot["channels_calls"], snapshot["channels_asked"]) == (1, [[CHANNEL, "UCother"]])
    assert len(snapshot["traceparents"]) == 1  # videos.list's, as before
