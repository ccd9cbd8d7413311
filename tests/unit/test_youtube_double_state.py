"""The videos.list double over real sockets on 127.0.0.1: counters, reset, latency and shutdown.

The ``yt`` (a running double) and ``session`` (an aiohttp client) fixtures are in
``conftest.py``, the request helpers in ``youtube_double_support.py``.
"""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from tests.unit.youtube_double_support import BOUND, get_videos, ids, set_fault, stats
from youtube_double import BATCH_HISTORY, DoubleState, RunningDouble, running_double

pytestmark = pytest.mark.asyncio


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
