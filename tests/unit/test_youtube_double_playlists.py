"""The double's playlistItems.list and channels.list over real sockets on 127.0.0.1: their answers.

The ``yt`` (a running double) and ``session`` (an aiohttp client) fixtures are in
``conftest.py``, the request helpers in ``youtube_double_support.py``; the
definitions (control API, bounds, reset, counters) are tested in
``test_youtube_double_playlist_control.py``, the faults in
``test_youtube_double_playlist_faults.py``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import aiohttp
import pytest

from tests.unit.youtube_double_support import get_channels, get_playlist_items, ids, stats
from youtube_double import (
    MAX_PLAYLIST_VIDEOS,
    PLAYLIST_NOT_FOUND_MESSAGE,
    RunningDouble,
    define_channel,
    define_playlist,
    invalid_page_token_body,
    missing_part_body,
    page_token,
    playlist_not_found_body,
    video_published_at,
)

pytestmark = pytest.mark.asyncio

PLAYLIST = "PLdoubleTest0123456789"
CHANNEL = "UCdoubleChannel0123456789"
UPLOADS = "UUdoubleChannel0123456789"


def _reason(body: bytes) -> str:
    reason: str = json.loads(body)["error"]["errors"][0]["reason"]
    return reason


# --- playlistItems.list --------------------------------------------------------


async def test_a_120_video_playlist_in_three_pages_of_50(
    yt: RunningDouble, session: aiohttp.ClientSession
) -> None:
    videos = ids(120)
    assert await define_playlist(session, yt.base, PLAYLIST, videos) == {"id": PLAYLIST, "entries": 120}

    pages: list[dict[str, Any]] = []
    token: str | None = None
    for _ in range(3):
        status, body = await get_playlist_items(session, yt, PLAYLIST, max_results=50, page_token=token)
        assert status == 200
        pages.append(json.loads(body))
        token = pages[-1].get("nextPageToken")

    assert [len(page["items"]) for page in pages] == [50, 50, 20]
    assert token is None  # the last page has no nextPageToken
    assert all("nextPageToken" in page for page in pages[:2])
    assert "prevPageToken" not in pages[0]
    for page in pages:
        assert page["kind"] == "youtube#playlistItemListResponse"
        assert isinstance(page["etag"], str)
        assert page["pageInfo"] == {"totalResults": 120, "resultsPerPage": 50}
    items = [item for page in pages for item in page["items"]]
    assert [item["contentDetails"]["videoId"] for item in items] == videos
    assert len({item["id"] for item in items}) == 120
    for item in items:
        vid = item["contentDetails"]["videoId"]
        assert item["kind"] == "youtube#playlistItem"
        assert item["contentDetails"] == {"videoId": vid, "videoPublishedAt": video_published_at(vid)}
        assert item["status"] == {"privacyStatus": "public"}
    snapshot = await stats(session, yt)
    assert snapshot["playlist_items_calls"] == 3
    assert snapshot["playlist_items_asked"] == [
        {"playlistId": PLAYLIST, "pageToken": None},
        {"playlistId": PLAYLIST, "pageToken": pages[0]["nextPageToken"]},
        {"playlistId": PLAYLIST, "pageToken": pages[1]["nextPageToken"]},
    ]
    assert (snapshot["calls"], snapshot["channels_calls"]) == (0, 0)


async def test_page_size_default_zero_and_out_of_range(
    yt: RunningDouble, session: aiohttp.ClientSession
) -> None:
    yt.state.set_playlist(PLAYLIST, ids(7))

    default = json.loads((await get_playlist_items(session, yt, PLAYLIST))[1])
    zero = json.loads((await get_playlist_items(session, yt, PLAYLIST, max_results=0))[1])
    refused = [await get_playlist_items(session, yt, PLAYLIST, max_results=m) for m in (51, -1, "abc")]

    assert len(default["items"]) == 5
    assert default["pageInfo"] == {"totalResults": 7, "resultsPerPage": 5}
    assert default["nextPageToken"] == page_token(5)
    assert (zero["items"], zero["pageInfo"]["totalResults"], "nextPageToken" in zero) == ([], 7, False)
    for status, body in refused:
        assert (status, _reason(body)) == (400, "invalidParameter")


async def test_private_deleted_and_unlisted_entries(
    yt: RunningDouble, session: aiohttp.ClientSession
) -> None:
    a, b, c, d = ids(4)
    yt.state.set_playlist(PLAYLIST, [a, b, c, d, b], private=[b], deleted=[c], unlisted=[d])

    status, body = await get_playlist_items(session, yt, PLAYLIST)

    assert status == 200
    items = json.loads(body)["items"]
    assert [(item["contentDetails"], item["status"]) for item in items] == [
        ({"videoId": a, "videoPublishedAt": video_published_at(a)}, {"privacyStatus": "public"}),
        ({"videoId": b}, {"privacyStatus": "private"}),
        ({"videoId": c}, {"privacyStatus": "privacyStatusUnspecified"}),
        ({"videoId": d, "videoPublishedAt": video_published_at(d)}, {"privacyStatus": "unlisted"}),
        ({"videoId": b}, {"privacyStatus": "private"}),
    ]
    assert json.loads(body)["pageInfo"]["totalResults"] == 5


async def test_only_the_parts_asked_for(yt: RunningDouble, session: aiohttp.ClientSession) -> None:
    yt.state.set_playlist(PLAYLIST, ids(1))

    details = json.loads((await get_playlist_items(session, yt, PLAYLIST, part="contentDetails"))[1])
    status_only = json.loads((await get_playlist_items(session, yt, PLAYLIST, part="status"))[1])
    unknown = json.loads((await get_playlist_items(session, yt, PLAYLIST, part="snippet"))[1])

    assert set(details["items"][0]) == {"kind", "etag", "id", "contentDetails"}
    assert set(status_only["items"][0]) == {"kind", "etag", "id", "status"}
    assert set(unknown["items"][0]) == {"kind", "etag", "id"}


async def test_unknown_playlist_is_404_playlist_not_found(
    yt: RunningDouble, session: aiohttp.ClientSession
) -> None:
    status, body = await get_playlist_items(session, yt, "PLnoSuchList")

    assert status == 404
    assert json.loads(body) == playlist_not_found_body()
    error = json.loads(body)["error"]
    assert error["code"] == 404
    assert error["errors"][0]["domain"] == "youtube.playlistItem"
    assert error["errors"][0]["reason"] == "playlistNotFound"
    assert error["message"] == PLAYLIST_NOT_FOUND_MESSAGE
    assert error["message"] == (
        "The playlist identified with the request's <code>playlistId</code> parameter cannot be found."
    )


async def test_invalid_page_tokens_are_400(yt: RunningDouble, session: aiohttp.ClientSession) -> None:
    yt.state.set_playlist(PLAYLIST, ids(12))
    forged = [
        "garbage!",
        "nope",
        base64.urlsafe_b64encode(b"PT:-1").decode(),
        base64.urlsafe_b64encode(b"PT:05").decode(),
        page_token(MAX_PLAYLIST_VIDEOS + 1),
    ]

    answers = [await get_playlist_items(session, yt, PLAYLIST, page_token=token) for token in forged]
    past_end = json.loads((await get_playlist_items(session, yt, PLAYLIST, page_token=page_token(40)))[1])

    for status, body in answers:
        assert status == 400
        assert json.loads(body) == invalid_page_token_body()
        assert _reason(body) == "invalidPageToken"
    assert past_end["items"] == []
    assert "nextPageToken" not in past_end


async def test_missing_playlist_id_or_part_is_400(yt: RunningDouble, session: aiohttp.ClientSession) -> None:
    yt.state.set_playlist(PLAYLIST, ids(1))

    no_id = await get_playlist_items(session, yt, None)
    empty_id = await get_playlist_items(session, yt, "")
    no_part = await get_playlist_items(session, yt, PLAYLIST, part=None)

    for status, body in (no_id, empty_id):
        assert (status, _reason(body)) == (400, "missingRequiredParameter")
    assert no_part == (400, json.dumps(missing_part_body(), separators=(",", ":")).encode())


# --- channels.list -------------------------------------------------------------


async def test_a_channel_names_its_uploads_playlist(
    yt: RunningDouble, session: aiohttp.ClientSession
) -> None:
    uploads = ids(3)
    defined = await define_channel(session, yt.base, CHANNEL, uploads)

    status, body = await get_channels(session, yt, CHANNEL)
    _, listed = await get_playlist_items(session, yt, UPLOADS)

    assert defined == {"id": CHANNEL, "uploads": UPLOADS, "entries": 3}
    assert status == 200
    data = json.loads(body)
    assert data["kind"] == "youtube#channelListResponse"
    assert isinstance(data["etag"], str)
    assert data["pageInfo"] == {"totalResults": 1, "resultsPerPage": 5}
    (item,) = data["items"]
    assert item["kind"] == "youtube#channel"
    assert isinstance(item["etag"], str)
    assert item["id"] == CHANNEL
    assert item["contentDetails"] == {"relatedPlaylists": {"likes": "", "uploads": UPLOADS}}
    assert [i["contentDetails"]["videoId"] for i in json.loads(listed)["items"]] == uploads


async def test_an_unknown_channel_is_200_without_items(
    yt: RunningDouble, session: aiohttp.ClientSession
) -> None:
    yt.state.set_channel(CHANNEL, ids(1))

    status, body = await get_channels(session, yt, "UCnobodyAtAll")
    _, mixed = await get_channels(session, yt, f"UCnobodyAtAll,{CHANNEL},{CHANNEL}")

    assert status == 200
    data = json.loads(body)
    assert data["pageInfo"] == {"totalResults": 0, "resultsPerPage": 5}
    assert "items" not in data
    assert [item["id"] for item in json.loads(mixed)["items"]] == [CHANNEL]


async def test_channels_need_an_id_and_a_part(yt: RunningDouble, session: aiohttp.ClientSession) -> None:
    no_id = await get_channels(session, yt, None)
    no_part = await get_channels(session, yt, CHANNEL, part=None)

    assert (no_id[0], _reason(no_id[1])) == (400, "missingRequiredParameter")
    assert (no_part[0], _reason(no_part[1])) == (400, "required")
