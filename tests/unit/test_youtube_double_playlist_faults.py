"""The fault switch, the key and the latency on playlistItems.list and channels.list, over real sockets.

One switch serves the three list methods: a fault is consumed by whichever
call arrives next. The fixtures are in ``conftest.py``, the request helpers in
``youtube_double_support.py``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import pytest

from tests.unit.youtube_double_support import (
    BOUND,
    STATUS_FAULTS,
    get_channels,
    get_playlist_items,
    get_videos,
    ids,
    set_fault,
    stats,
)
from youtube_double import (
    RunningDouble,
    bad_key_body,
    running_double,
)

pytestmark = pytest.mark.asyncio

PLAYLIST = "PLfaults"
CHANNEL = "UCfaults"
KEY = "test-key"

Call = Callable[[aiohttp.ClientSession, RunningDouble], Awaitable[tuple[int, bytes]]]


async def _playlist_items(session: aiohttp.ClientSession, yt: RunningDouble) -> tuple[int, bytes]:
    return await get_playlist_items(session, yt, PLAYLIST)


async def _channels(session: aiohttp.ClientSession, yt: RunningDouble) -> tuple[int, bytes]:
    return await get_channels(session, yt, CHANNEL)


ENDPOINTS: dict[str, Call] = {"playlistItems": _playlist_items, "channels": _channels}


@pytest.fixture
def listed(yt: RunningDouble) -> RunningDouble:
    """The double holding PLAYLIST (3 videos) and CHANNEL (2 uploads)."""
    yt.state.set_playlist(PLAYLIST, ids(3))
    yt.state.set_channel(CHANNEL, ids(2))
    return yt


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize(
    ("mode", "status", "expected"),
    STATUS_FAULTS,
)
async def test_status_faults_return_their_body_once(
    listed: RunningDouble,
    session: aiohttp.ClientSession,
    endpoint: str,
    mode: str,
    status: int,
    expected: dict[str, Any],
) -> None:
    call = ENDPOINTS[endpoint]
    await set_fault(session, listed, mode=mode, count=1)

    first = await call(session, listed)
    second = await call(session, listed)

    assert first[0] == status
    assert json.loads(first[1]) == expected
    assert second[0] == 200
    if mode == "quota":
        assert json.loads(first[1])["error"]["errors"][0]["reason"] == "quotaExceeded"


@pytest.mark.parametrize("endpoint", ENDPOINTS)
async def test_malformed_is_truncated_json(
    listed: RunningDouble, session: aiohttp.ClientSession, endpoint: str
) -> None:
    call = ENDPOINTS[endpoint]
    _, whole = await call(session, listed)
    listed.state.set_fault("malformed", 1)

    status, body = await call(session, listed)

    assert status == 200
    assert whole.startswith(body)
    assert len(body) < len(whole)
    with pytest.raises(json.JSONDecodeError):
        json.loads(body)


async def test_malformed_leaves_an_error_answer_alone(
    listed: RunningDouble, session: aiohttp.ClientSession
) -> None:
    listed.state.set_fault("malformed", 1)

    status, body = await get_playlist_items(session, listed, "PLnoSuchList")

    assert status == 404
    assert json.loads(body)["error"]["errors"][0]["reason"] == "playlistNotFound"
    assert listed.state.fault.mode == "none"  # consumed all the same


@pytest.mark.parametrize("bad_value", [None, "abc"])
async def test_bad_count_spoils_the_first_video_id_and_uploads_id(
    listed: RunningDouble, session: aiohttp.ClientSession, bad_value: str | None
) -> None:
    videos = ids(3)
    await set_fault(session, listed, mode="bad_count", count=2, bad_value=bad_value)

    items = json.loads((await get_playlist_items(session, listed, PLAYLIST))[1])["items"]
    channel = json.loads((await get_channels(session, listed, CHANNEL))[1])["items"][0]

    assert items[0]["contentDetails"]["videoId"] == (bad_value or "-5")
    assert [item["contentDetails"]["videoId"] for item in items[1:]] == videos[1:]
    assert channel["contentDetails"]["relatedPlaylists"]["uploads"] == (bad_value or "-5")


@pytest.mark.parametrize("endpoint", ENDPOINTS)
async def test_reset_is_a_client_connection_error(
    listed: RunningDouble, session: aiohttp.ClientSession, endpoint: str
) -> None:
    call = ENDPOINTS[endpoint]
    # aiohttp's client retries an idempotent request once after a disconnect.
    await set_fault(session, listed, mode="reset", count=2)

    with pytest.raises(aiohttp.ClientConnectionError):
        await call(session, listed)

    assert (await call(session, listed))[0] == 200
    snapshot = await stats(session, listed)
    assert snapshot["playlist_items_calls"] + snapshot["channels_calls"] == 3


@pytest.mark.parametrize("endpoint", ENDPOINTS)
async def test_stall_exceeds_a_client_timeout(
    listed: RunningDouble, session: aiohttp.ClientSession, endpoint: str
) -> None:
    listed.state.set_fault("stall", 1, stall_seconds=BOUND)
    url, params = (
        (listed.playlist_items_url, {"part": "status", "playlistId": PLAYLIST})
        if endpoint == "playlistItems"
        else (listed.channels_url, {"part": "contentDetails", "id": CHANNEL})
    )

    with pytest.raises(asyncio.TimeoutError):
        async with session.get(url, params=params, timeout=aiohttp.ClientTimeout(total=0.1)) as resp:
            await resp.read()


async def test_one_switch_consumed_in_arrival_order_across_endpoints(
    listed: RunningDouble, session: aiohttp.ClientSession
) -> None:
    (a,) = ids(1)
    await set_fault(session, listed, mode="quota", count=3)

    faulted = [
        (await get_playlist_items(session, listed, PLAYLIST))[0],
        (await get_videos(session, listed, a))[0],
        (await get_channels(session, listed, CHANNEL))[0],
    ]
    after = [
        (await get_channels(session, listed, CHANNEL))[0],
        (await get_videos(session, listed, a))[0],
        (await get_playlist_items(session, listed, PLAYLIST))[0],
    ]

    assert faulted == [403, 403, 403]
    assert after == [200, 200, 200]
    snapshot = await stats(session, listed)
    assert (snapshot["calls"], snapshot["playlist_items_calls"], snapshot["channels_calls"]) == (2, 2, 2)


async def test_the_key_is_required_on_every_endpoint(session: aiohttp.ClientSession) -> None:
    async with running_double(require_key=KEY) as yt:
        yt.state.set_playlist(PLAYLIST, ids(1))
        yt.state.set_channel(CHANNEL, ids(1))
        good = {"X-Goog-Api-Key": KEY}
        answers = [
            await get_playlist_items(session, yt, PLAYLIST, headers=good),
            await get_channels(session, yt, CHANNEL, headers=good),
            await get_playlist_items(session, yt, PLAYLIST),
            await get_channels(session, yt, CHANNEL, headers={"X-Goog-Api-Key": "nope"}),
        ]
        snapshot = await stats(session, yt)
        async with session.get(f"{yt.playlist_items_url}?part=status&playlistId={PLAYLIST}&key={KEY}") as r:
            leaked = r.status
        after_leak = await stats(session, yt)

    assert [status for status, _ in answers] == [200, 200, 400, 400]
    assert json.loads(answers[2][1]) == bad_key_body()
    assert json.loads(answers[3][1]) == bad_key_body()
    assert (snapshot["key_header_seen"], snapshot["key_in_query_seen"]) == (True, False)
    assert leaked == 400
    assert after_leak["key_in_query_seen"] is True
    assert after_leak["calls"] == 0


async def test_latency_applies_to_the_new_endpoints(session: aiohttp.ClientSession) -> None:
    loop = asyncio.get_running_loop()
    async with running_double(latency_ms=150) as yt:
        yt.state.set_channel(CHANNEL, ids(1))
        started = loop.time()
        status, _ = await get_channels(session, yt, CHANNEL)
        elapsed = loop.time() - started

    assert status == 200
    assert elapsed >= 0.15


async def test_loop_token_makes_each_page_name_the_token_it_was_asked_with(
    yt: RunningDouble, session: aiohttp.ClientSession
) -> None:
    yt.state.set_playlist(PLAYLIST, ids(120))
    await set_fault(session, yt, mode="loop_token", count=3)

    first = json.loads((await get_playlist_items(session, yt, PLAYLIST, max_results=50))[1])
    token = first["nextPageToken"]
    again = json.loads((await get_playlist_items(session, yt, PLAYLIST, max_results=50, page_token=token))[1])
    channel_status, _ = await get_channels(session, yt, CHANNEL)  # no pages: left alone (consumes one)
    after = json.loads((await get_playlist_items(session, yt, PLAYLIST, max_results=50, page_token=token))[1])

    assert again["nextPageToken"] == token and again["items"] == first["items"]
    assert channel_status == 200
    assert after["nextPageToken"] != token  # the fault consumed: pages go on
