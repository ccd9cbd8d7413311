"""The videos.list double over real sockets on 127.0.0.1: its answers, and the API key.

The ``yt`` (a running double) and ``session`` (an aiohttp client) fixtures are in
``conftest.py``, the request helpers in ``youtube_double_support.py``.
"""

from __future__ import annotations

import json

import aiohttp
import pytest

from influencer_stats.interpreters.videos.synthetic import synthetic_stats
from tests.unit.youtube_double_support import get_videos, ids, stats
from youtube_double import (
    RunningDouble,
    bad_key_body,
    render_videos_list,
    running_double,
    too_many_ids_body,
)

pytestmark = pytest.mark.asyncio

KEY = "test-key"


# --- Serving -----------------------------------------------------------------


async def test_port_zero_picks_a_free_port_and_healthz_answers(
    yt: RunningDouble, session: aiohttp.ClientSession
) -> None:
    assert yt.port != 0
    assert yt.url == f"http://127.0.0.1:{yt.port}/youtube/v3/videos"
    async with session.get(f"{yt.base}/healthz") as resp:
        assert resp.status == 200
        assert await resp.text() == "ok"


async def test_statistics_shape_and_string_counts(yt: RunningDouble, session: aiohttp.ClientSession) -> None:
    wanted = ids(12)
    # Both cases of dislikeCount are covered by these ids.
    assert {synthetic_stats(v).dislikes > 0 for v in wanted} == {True, False}

    status, body = await get_videos(session, yt, ",".join(wanted))

    assert status == 200
    data = json.loads(body)
    assert data["kind"] == "youtube#videoListResponse"
    assert isinstance(data["etag"], str)
    assert data["pageInfo"] == {"totalResults": 12, "resultsPerPage": 12}
    assert [item["id"] for item in data["items"]] == wanted
    for item in data["items"]:
        s = synthetic_stats(item["id"])
        assert item["kind"] == "youtube#video"
        assert isinstance(item["etag"], str)
        expected = {
            "viewCount": str(s.views),
            "likeCount": str(s.likes),
            "favoriteCount": "0",
            "commentCount": str(s.comments),
        }
        if s.dislikes > 0:
            expected["dislikeCount"] = str(s.dislikes)
        assert item["statistics"] == expected
    assert body == render_videos_list(wanted)


async def test_unknown_ids_absent_repeats_once_empty_pieces_ignored(
    yt: RunningDouble, session: aiohttp.ClientSession
) -> None:
    a, b = ids(2)
    status, body = await get_videos(session, yt, f"{b},Xgone,,{a},{b},")

    assert status == 200
    data = json.loads(body)
    assert [item["id"] for item in data["items"]] == [b, a]
    assert data["pageInfo"]["totalResults"] == 2
    assert body == render_videos_list([b, "Xgone", a])


async def test_only_unknown_ids_give_empty_items(yt: RunningDouble, session: aiohttp.ClientSession) -> None:
    status, body = await get_videos(session, yt, "Xa,Xb")

    assert status == 200
    assert json.loads(body)["items"] == []
    assert body == render_videos_list([])


async def test_repeated_id_parameters_are_joined(yt: RunningDouble, session: aiohttp.ClientSession) -> None:
    a, b = ids(2)
    status, body = await get_videos(session, yt, a, extra=f"&id={b}")

    assert status == 200
    assert body == render_videos_list([a, b])


async def test_fifty_ids_pass_fifty_one_are_rejected(
    yt: RunningDouble, session: aiohttp.ClientSession
) -> None:
    status50, _ = await get_videos(session, yt, ",".join(ids(50)))
    status51, body51 = await get_videos(session, yt, ",".join(ids(51)))

    assert status50 == 200
    assert status51 == 400
    error = json.loads(body51)
    assert error == too_many_ids_body(51)
    assert error["error"]["code"] == 400
    assert error["error"]["errors"][0]["reason"] == "badRequest"


async def test_part_must_contain_statistics(yt: RunningDouble, session: aiohttp.ClientSession) -> None:
    (a,) = ids(1)
    missing = await get_videos(session, yt, a, part=None)
    snippet = await get_videos(session, yt, a, part="snippet")
    both = await get_videos(session, yt, a, part="snippet,statistics")

    assert missing[0] == 400
    missing_error = json.loads(missing[1])["error"]
    assert missing_error["message"] == "Required parameter: part"
    assert missing_error["errors"][0]["reason"] == "required"
    assert snippet[0] == 400
    assert json.loads(snippet[1])["error"]["errors"][0]["reason"] == "badRequest"
    assert both == (200, render_videos_list([a]))


async def test_missing_id_parameter_is_rejected(yt: RunningDouble, session: aiohttp.ClientSession) -> None:
    async with session.get(f"{yt.url}?part=statistics") as resp:
        assert resp.status == 400
        assert (await resp.json())["error"]["code"] == 400


# --- Key ---------------------------------------------------------------------


async def test_key_header_is_required_and_query_key_is_a_leak(session: aiohttp.ClientSession) -> None:
    async with running_double(require_key=KEY) as yt:
        (a,) = ids(1)
        good = await get_videos(session, yt, a, headers={"X-Goog-Api-Key": KEY})
        after_good = await stats(session, yt)
        missing = await get_videos(session, yt, a)
        wrong = await get_videos(session, yt, a, headers={"X-Goog-Api-Key": "nope"})
        in_query = await get_videos(session, yt, a, extra=f"&key={KEY}")
        after_all = await stats(session, yt)

    assert good == (200, render_videos_list([a]))
    assert (after_good["key_header_seen"], after_good["key_in_query_seen"]) == (True, False)
    for status, body in (missing, wrong, in_query):
        assert status == 400
        assert json.loads(body) == bad_key_body()
    assert after_all["key_in_query_seen"] is True
    assert after_all["calls"] == 4


async def test_without_required_key_any_request_passes_but_leaks_are_recorded(
    yt: RunningDouble, session: aiohttp.ClientSession
) -> None:
    (a,) = ids(1)
    status, _ = await get_videos(session, yt, a, extra="&key=whatever")

    assert status == 200
    snapshot = await stats(session, yt)
    assert (snapshot["key_header_seen"], snapshot["key_in_query_seen"]) == (False, True)
