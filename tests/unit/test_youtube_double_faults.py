"""The videos.list double over real sockets on 127.0.0.1: its faults and their control API.

The ``yt`` (a running double) and ``session`` (an aiohttp client) fixtures are in
``conftest.py``, the request helpers in ``youtube_double_support.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import aiohttp
import pytest

from influencer_stats.interpreters.videos.synthetic import synthetic_stats
from tests.unit.youtube_double_support import BOUND, STATUS_FAULTS, get_videos, ids, set_fault, stats
from youtube_double import (
    FAULT_MODES,
    RunningDouble,
    backend_error_body,
    bad_key_body,
    quota_body,
    rate_limit_body,
    render_videos_list,
)

pytestmark = pytest.mark.asyncio


# --- Faults --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "status", "expected"),
    STATUS_FAULTS,
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
