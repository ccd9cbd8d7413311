"""The YouTube reader's calls: a connection held before a unit is spent or a call timed, a read
that cannot finish within the day's budget stopped after its first page, and pages that loop."""

from __future__ import annotations

import asyncio

import pytest
from returns.result import Result, Success

from influencer_stats.algebras.youtube import Answered
from influencer_stats.domain.models import (
    InvalidUpstreamData,
    QuotaExhausted,
    UpstreamBusy,
    UpstreamError,
    VideoId,
)
from influencer_stats.interpreters.readers.youtube import YouTubeSourceReader
from influencer_stats.interpreters.readers.youtube_wire import playlist_url
from influencer_stats.interpreters.youtube.call_gate import CallGate, Flow
from influencer_stats.testing.event_log import CapturingEventLog
from tests.unit.test_source_readers import (
    PLAYLIST,
    ROOT,
    ScriptedGet,
    Spender,
    item,
    ok,
    page,
    pages_of,
    reader,
    video,
)


async def test_a_call_waiting_for_a_connection_spends_no_unit_and_runs_no_timer() -> None:
    """The pool's one connection is held elsewhere: the read waits for it before it spends a
    unit or starts its call's timer (the call is made after the wait), then reads."""
    gate = CallGate(1, per_flow=1, max_waiting=4)
    holder = Flow()
    assert gate.try_enter(holder)
    get, spender = ScriptedGet(pages_of(PLAYLIST.id, [video(1)])), Spender(10)
    read, _ = reader(get, spender, gate, call_timeout_s=0.01)

    reading = asyncio.ensure_future(read.videos(PLAYLIST, 10))
    for _ in range(10):  # the read runs until it waits at the gate
        await asyncio.sleep(0)
    waited = (spender.spent, get.urls[:], reading.done(), gate.waiting)
    gate.leave(holder)

    assert waited == (0, [], False, 1)
    assert await reading == Success((video(1),))
    assert spender.spent == 1 and gate.waiting == 0


async def test_with_the_waiting_room_full_a_read_is_upstream_busy_at_once_spending_nothing() -> None:
    gate = CallGate(1, per_flow=1, max_waiting=0)
    assert gate.try_enter(Flow())
    get, spender = ScriptedGet(pages_of(PLAYLIST.id, [video(1)])), Spender(10)
    read, _ = reader(get, spender, gate)

    assert isinstance((await read.videos(PLAYLIST, 10)).failure(), UpstreamBusy)
    assert spender.spent == 0 and get.urls == []


async def test_reads_at_once_take_turns_for_the_connections_each_a_flow_of_its_own() -> None:
    """Two connections, three reads of three pages at once: every read ends, no call waits
    while timed, and the gate ends empty."""
    videos = [video(n) for n in range(150)]
    script = pages_of(PLAYLIST.id, videos)
    gate = CallGate(2, per_flow=2, max_waiting=8)

    async def slow(url: str) -> Result[Answered, UpstreamError]:
        await asyncio.sleep(0)  # a turn for the others
        return script[url][0]

    reads = [
        YouTubeSourceReader(
            slow, ROOT, CapturingEventLog(), gate, call_timeout_s=5.0, deadline_s=30.0, retries=0
        )
        for _ in range(3)
    ]

    done = await asyncio.gather(*(r.videos(PLAYLIST, 5_000) for r in reads))

    assert done == [Success(tuple(videos))] * 3
    assert gate.try_enter(None) and gate.try_enter(None)  # both connections free again


@pytest.mark.parametrize(("units", "expected_calls"), [(3, 3), (2, 1)])
async def test_a_read_whose_remaining_pages_exceed_the_budget_left_stops_after_its_first(
    units: int, expected_calls: int
) -> None:
    get, spender = ScriptedGet(pages_of(PLAYLIST.id, [video(n) for n in range(120)])), Spender(units)
    read, _ = reader(get, spender)

    done = await read.videos(PLAYLIST, 5_000)

    assert len(get.urls) == spender.spent == expected_calls
    if units == 3:
        assert isinstance(done, Success) and len(done.unwrap()) == 120
    else:  # 3 pages, 1 left after the first: not started
        assert isinstance(done.failure(), QuotaExhausted)


async def test_a_page_naming_a_token_already_read_is_invalid_data_at_once() -> None:
    first = page([item(video(1))], 200, "A")
    again = page([item(video(2))], 200, "A")
    get = ScriptedGet(
        {
            playlist_url(ROOT, PLAYLIST.id, None): [ok(first)],
            playlist_url(ROOT, PLAYLIST.id, "A"): [ok(again)],
        }
    )
    spender = Spender(100)
    read, _ = reader(get, spender)

    failed = (await read.videos(PLAYLIST, 5_000)).failure()

    assert isinstance(failed, InvalidUpstreamData) and "token again" in failed.detail
    assert spender.spent == 2


async def test_an_empty_page_naming_a_next_one_is_invalid_data_at_once() -> None:
    get = ScriptedGet({playlist_url(ROOT, PLAYLIST.id, None): [ok(page([], 5_000, "B"))]})
    spender = Spender(100)
    read, _ = reader(get, spender)

    failed = (await read.videos(PLAYLIST, 5_000)).failure()

    assert isinstance(failed, InvalidUpstreamData) and "held nothing" in failed.detail
    assert spender.spent == 1


async def test_a_page_of_private_videos_only_is_no_loop() -> None:
    private = page([item(video(1), "private")], 2, "C")
    last = page([item(video(2))], 2)
    get = ScriptedGet(
        {
            playlist_url(ROOT, PLAYLIST.id, None): [ok(private)],
            playlist_url(ROOT, PLAYLIST.id, "C"): [ok(last)],
        }
    )
    read, _ = reader(get)

    assert await read.videos(PLAYLIST, 10) == Success((VideoId(video(2)),))
