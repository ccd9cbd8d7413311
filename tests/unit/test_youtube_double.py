"""The videos.list double, exercised over real sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from influencer_stats.interpreters.videos.synthetic import synthetic_stats, synthetic_video_id
from influencer_stats.testing.youtube_double import (
    BATCH_HISTORY,
    FAULT_MODES,
    DoubleState,
    RunningDouble,
    backend_error_body,
    bad_key_body,
    quota_body,
    rate_limit_body,
    render_videos_list,
    running_double,
    too_many_body,
    too_many_ids_body,
)

pytestmark = pytest.mark.asyncio

KEY = "test-key"
BOUND = 10.0  # seconds: upper bound of every wait, never a timing assumption


def ids(n: int, start: int = 0) -> list[str]:
    return [synthetic_video_id(i) for i in range(start, start + n)]


@pytest_asyncio.fixture
async def yt() -> AsyncIterator[RunningDouble]:
    async with running_double() as double:
        yield double


@pytest_asyncio.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=BOUND)) as s:
        yield s


async def get_videos(
    session: aiohttp.ClientSession,
    yt: RunningDouble,
    id_param: str,
    *,
    part: str | None = "statistics",
    headers: dict[str, str] | None = None,
    extra: str = "",
) -> tuple[int, bytes]:
    query = f"id={id_param}" if part is None else f"part={part}&id={id_param}"
    async with session.get(f"{yt.url}?{query}{extra}", headers=headers) as resp:
        return resp.status, await resp.read()


async def set_fault(session: aiohttp.ClientSession, yt: RunningDouble, **body: Any) -> dict[str, Any]:
    async with session.post(f"{yt.base}/_control/fault", json=body) as resp:
        assert resp.status == 200, await resp.text()
        result: dict[str, Any] = await resp.json()
        return result


async def stats(session: aiohttp.ClientSession, yt: RunningDouble) -> dict[str, Any]:
    async with session.get(f"{yt.base}/_control/stats") as resp:
        assert resp.status == 200
        result: dict[str, Any] = await resp.json()
        return result


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


# --- Faults --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "status", "expected"),
    [
        ("quota", 403, quota_body()),
        ("rate_limit", 403, rate_limit_body()),
        ("bad_key", 400, bad_key_body()),
        ("server_error", 500, backend_error_body(500)),
        ("unavailable", 503, backend_error_body(503)),
        ("too_many", 429, too_many_body()),
    ],
)
async def test_status_faults_return_their_body_once(
    yt: RunningDouble,
    session: aiohttp.ClientSession,
    mode: str,
    status: int,
    expected: dict[str, Any],
) -> None:
    (a,) = ids(1)
    state = await set_fault(session, yt, mode=mode, count=1)
    assert state["mode"] == mode
    assert state["remaining"] == 1

    first = await get_videos(session, yt, a)
    second = await get_videos(session, yt, a)

    assert first[0] == status
    assert json.loads(first[1]) == expected
    assert second == (200, render_videos_list([a]))
    assert (await stats(session, yt))["fault"]["mode"] == "none"


async def test_documented_error_bodies() -> None:
    quota = quota_body()["error"]
    assert quota["code"] == 403
    assert quota["errors"][0] == {
        "message": quota["message"],
        "domain": "youtube.quota",
        "reason": "quotaExceeded",
    }
    assert "exceeded your" in quota["message"]
    assert "quota</a>" in quota["message"]
    rate = rate_limit_body()["error"]["errors"][0]
    assert (rate["domain"], rate["reason"]) == ("usageLimits", "rateLimitExceeded")
    bad_key = bad_key_body()["error"]
    assert bad_key["message"] == "API key not valid. Please pass a valid API key."
    assert bad_key["status"] == "INVALID_ARGUMENT"
    assert (bad_key["errors"][0]["domain"], bad_key["errors"][0]["reason"]) == ("global", "badRequest")
    backend = backend_error_body(503)["error"]
    assert backend["code"] == 503
    assert backend["errors"][0]["reason"] == "backendError"


async def test_count_decrements_back_to_none(yt: RunningDouble, session: aiohttp.ClientSession) -> None:
    (a,) = ids(1)
    await set_fault(session, yt, mode="quota", count=2)

    first = await get_videos(session, yt, a)
    after_first = (await stats(session, yt))["fault"]
    second = await get_videos(session, yt, a)
    third = await get_videos(session, yt, a)

    assert (first[0], second[0], third[0]) == (403, 403, 200)
    assert (after_first["mode"], after_first["remaining"]) == ("quota", 1)
    assert (await stats(session, yt))["fault"] == {
        "mode": "none",
        "remaining": None,
        "stall_seconds": 30.0,
        "bad_value": "-5",
    }


async def test_fault_without_count_lasts_until_changed(
    yt: RunningDouble, session: aiohttp.ClientSession
) -> None:
    (a,) = ids(1)
    await set_fault(session, yt, mode="server_error")

    statuses = [(await get_videos(session, yt, a))[0] for _ in range(3)]
    await set_fault(session, yt, mode="none")
    after = await get_videos(session, yt, a)

    assert statuses == [500, 500, 500]
    assert after[0] == 200


async def test_stall_delays_then_succeeds(yt: RunningDouble, session: aiohttp.ClientSession) -> None:
    (a,) = ids(1)
    await set_fault(session, yt, mode="stall", count=1, stall_seconds=0.2)
    loop = asyncio.get_running_loop()

    started = loop.time()
    stalled = await get_videos(session, yt, a)
    elapsed = loop.time() - started

    assert stalled == (200, render_videos_list([a]))
    assert elapsed >= 0.2
    assert (await stats(session, yt))["fault"]["mode"] == "none"


async def test_stall_exceeds_a_client_timeout(yt: RunningDouble, session: aiohttp.ClientSession) -> None:
    (a,) = ids(1)
    yt.state.set_fault("stall", 1, stall_seconds=BOUND)

    with pytest.raises(asyncio.TimeoutError):
        async with session.get(
            f"{yt.url}?part=statistics&id={a}", timeout=aiohttp.ClientTimeout(total=0.1)
        ) as resp:
            await resp.read()


async def test_malformed_is_truncated_json(yt: RunningDouble, session: aiohttp.ClientSession) -> None:
    wanted = ids(3)
    yt.state.set_fault("malformed", 1)

    status, body = await get_videos(session, yt, ",".join(wanted))

    assert status == 200
    assert render_videos_list(wanted).startswith(body)
    assert body != render_videos_list(wanted)
    with pytest.raises(json.JSONDecodeError):
        json.loads(body)


@pytest.mark.parametrize("bad_value", [None, "abc"])
async def test_bad_count_is_valid_json_with_a_bad_view_count(
    yt: RunningDouble, session: aiohttp.ClientSession, bad_value: str | None
) -> None:
    wanted = ids(3)
    await set_fault(session, yt, mode="bad_count", count=1, bad_value=bad_value)

    status, body = await get_videos(session, yt, ",".join(wanted))

    assert status == 200
    items = json.loads(body)["items"]
    assert items[0]["statistics"]["viewCount"] == (bad_value or "-5")
    assert items[1]["statistics"]["viewCount"] == str(synthetic_stats(wanted[1]).views)


async def test_reset_writes_nothing_and_closes(yt: RunningDouble) -> None:
    (a,) = ids(1)
    yt.state.set_fault("reset", 1)

    reader, writer = await asyncio.wait_for(asyncio.open_connection(yt.host, yt.port), BOUND)
    try:
        writer.write(f"GET /youtube/v3/videos?part=statistics&id={a} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        await writer.drain()
        try:
            received = await asyncio.wait_for(reader.read(), BOUND)
        except ConnectionResetError:  # an abort may arrive as RST: still nothing received
            received = b""
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()

    assert received == b""
    assert yt.state.calls == 1


async def test_reset_is_a_client_connection_error(yt: RunningDouble, session: aiohttp.ClientSession) -> None:
    (a,) = ids(1)
    # aiohttp's client retries an idempotent request once after a disconnect,
    # so two resets are needed before the caller sees the error.
    await set_fault(session, yt, mode="reset", count=2)

    with pytest.raises(aiohttp.ClientConnectionError):
        await get_videos(session, yt, a)

    assert yt.state.calls == 2
    assert await get_videos(session, yt, a) == (200, render_videos_list([a]))


async def test_control_rejects_bad_faults(yt: RunningDouble, session: aiohttp.ClientSession) -> None:
    bodies: list[Any] = [
        {"mode": "explode"},
        {"mode": "quota", "count": 0},
        {"mode": "quota", "count": "2"},
        {"mode": "stall", "stall_seconds": -1},
        {"mode": "bad_count", "bad_value": 5},
        ["quota"],
    ]
    for body in bodies:
        async with session.post(f"{yt.base}/_control/fault", json=body) as resp:
            assert resp.status == 400, body
    assert (await stats(session, yt))["fault"]["mode"] == "none"


async def test_every_fault_mode_is_accepted_by_the_control_api(
    yt: RunningDouble, session: aiohttp.ClientSession
) -> None:
    for mode in FAULT_MODES:
        assert (await set_fault(session, yt, mode=mode, count=3))["mode"] == mode


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


# --- Counters ------------------------------------------------------------------


async def test_counters_and_reset(yt: RunningDouble, session: aiohttp.ClientSession) -> None:
    first, second = ids(3), ids(5, start=10)
    await get_videos(session, yt, ",".join(first))
    await get_videos(session, yt, ",".join([*second, second[0]]))
    await set_fault(session, yt, mode="quota")

    snapshot = await stats(session, yt)
    async with session.post(f"{yt.base}/_control/reset") as resp:
        assert resp.status == 200
    after = await stats(session, yt)

    assert snapshot["calls"] == 2
    assert snapshot["ids_requested"] == 9
    assert snapshot["max_ids_in_call"] == 6
    assert snapshot["batches"] == [first, [*second, second[0]]]
    assert snapshot["fault"]["mode"] == "quota"
    assert after["calls"] == 0
    assert after["ids_requested"] == 0
    assert after["max_ids_in_call"] == 0
    assert after["batches"] == []
    assert after["fault"]["mode"] == "none"


async def test_errors_count_as_calls(yt: RunningDouble, session: aiohttp.ClientSession) -> None:
    yt.state.set_fault("quota", 1)
    await get_videos(session, yt, ",".join(ids(2)))
    await get_videos(session, yt, ",".join(ids(51)))

    assert yt.state.calls == 2
    assert yt.state.ids_requested == 53
    assert yt.state.max_ids_in_call == 51


async def test_batches_keep_the_last_hundred(yt: RunningDouble, session: aiohttp.ClientSession) -> None:
    for n in range(BATCH_HISTORY + 5):
        await get_videos(session, yt, synthetic_video_id(n))

    snapshot = await stats(session, yt)

    assert snapshot["calls"] == BATCH_HISTORY + 5
    assert len(snapshot["batches"]) == BATCH_HISTORY
    assert snapshot["batches"][0] == [synthetic_video_id(5)]


async def test_latency_is_added_per_call(session: aiohttp.ClientSession) -> None:
    loop = asyncio.get_running_loop()
    async with running_double(latency_ms=150) as yt:
        started = loop.time()
        status, _ = await get_videos(session, yt, ",".join(ids(2)))
        elapsed = loop.time() - started

    assert status == 200
    assert elapsed >= 0.15


async def test_shared_state_and_prompt_shutdown_with_a_stalled_request(
    session: aiohttp.ClientSession,
) -> None:
    state = DoubleState(default_stall_seconds=BOUND * 3)
    loop = asyncio.get_running_loop()
    (a,) = ids(1)
    async with running_double(state=state) as yt:
        assert yt.state is state
        state.set_fault("stall")
        request = asyncio.create_task(get_videos(session, yt, a))
        deadline = loop.time() + BOUND
        while state.calls == 0:  # bounded wait for the request to arrive
            assert loop.time() < deadline
            await asyncio.sleep(0.005)
        exiting = loop.time()
    shutdown = loop.time() - exiting
    result = await asyncio.wait_for(asyncio.gather(request, return_exceptions=True), BOUND)

    assert shutdown < BOUND  # far below the 30 s stall: the stall was woken
    assert isinstance(result[0], tuple | aiohttp.ClientError)
