"""Refreshes of one collection: concurrent ones share one read, a user's within the interval is
refused (429 with Retry-After), the refresher's never; and the parts that do it, on fake clocks."""

from __future__ import annotations

import asyncio

from returns.result import Result, Success

from influencer_stats.domain.models import (
    CollectionId,
    CollectionSource,
    KeptSource,
    ReadError,
    RefreshTooSoon,
    VideoId,
)
from influencer_stats.logic.refreshes import RecentReads, SingleFlight
from influencer_stats.testing.clock import ManualClock
from tests.unit.http_api_support import assert_problem, header
from tests.unit.sources_support import SourcesService, sources_service

V = [VideoId(f"video{n:06d}") for n in range(10)]
C = CollectionId("c")


class HeldReader:
    """Reads a source once ``release`` is set (none at first), counting reads."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.reads = 0

    async def videos(self, source: CollectionSource, limit: int) -> Result[tuple[VideoId, ...], ReadError]:
        self.reads += 1
        await self.release.wait()
        return Success(tuple(V[: self.reads]))


async def _kept(api: SourcesService) -> KeptSource:
    kept = (await api.imports.sources.get(C)).unwrap()
    assert kept is not None
    return kept


async def _turns(n: int = 10) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


async def test_concurrent_refreshes_of_a_collection_share_one_read() -> None:
    reader = HeldReader()
    reader.release.set()
    api = sources_service(reader=reader, refresh_min_interval_s=60, clock=ManualClock())
    await api.put("c", {"playlist": "PLa"})
    reader.release.clear()

    refreshes = [asyncio.ensure_future(api.imports.refresh_from(C, await _kept(api)))]
    await _turns()
    refreshes += [asyncio.ensure_future(api.imports.refresh(C)) for _ in range(3)]  # joining is free
    await _turns()
    reader.release.set()
    done = await asyncio.gather(*refreshes)

    assert reader.reads == 2  # the import, then one read for four refreshes
    assert all(isinstance(r, Success) and r.unwrap().videos == tuple(V[:2]) for r in done)


async def test_a_users_refresh_within_the_interval_is_429_with_retry_after_the_refreshers_is_not() -> None:
    reader, clock = HeldReader(), ManualClock(100.0)
    reader.release.set()
    api = sources_service(reader=reader, refresh_min_interval_s=60, clock=clock)
    await api.put("c", {"playlist": "PLa"})
    clock.now += 20.5

    early = await api.refresh("c")
    background = await api.imports.refresh_from(C, await _kept(api))
    clock.now += 59.0
    still = await api.imports.refresh(C)
    clock.now += 1.0
    later = await api.refresh("c")

    problem = assert_problem(early, 429)
    assert problem["type"] == "urn:influencer-stats:problem:refresh-too-soon"
    assert header(early, "retry-after") == "40"
    assert isinstance(background, Success)  # the refresher keeps its own interval
    assert still.failure() == RefreshTooSoon(C, 1)  # counted from the refresher's read
    assert later.status == 200
    assert reader.reads == 3  # the import, the refresher's, the later one


async def test_an_interval_of_0_never_refuses() -> None:
    reader = HeldReader()
    reader.release.set()
    api = sources_service(reader=reader, refresh_min_interval_s=0, clock=ManualClock())
    await api.put("c", {"playlist": "PLa"})

    assert [(await api.refresh("c")).status for _ in range(3)] == [200] * 3


async def test_a_shared_run_goes_on_while_one_caller_waits_and_is_cancelled_when_none_does() -> None:
    flights: SingleFlight[str, int] = SingleFlight()
    started, release = [], asyncio.Event()

    async def work() -> int:
        started.append(1)
        await release.wait()
        return len(started)

    first, second = (asyncio.ensure_future(flights.run("k", work)) for _ in range(2))
    await _turns()
    first.cancel()
    await _turns()
    assert flights.running("k")
    release.set()
    assert await second == 1 and started == [1]
    assert first.cancelled()

    release.clear()
    alone = asyncio.ensure_future(flights.run("k", work))  # a new run: the last one ended
    await _turns()
    alone.cancel()
    await _turns()
    assert not flights.running("k") and started == [1, 1]


def test_recent_reads_say_how_long_to_wait_and_forget_the_oldest_beyond_their_bound() -> None:
    clock = ManualClock(10.0)
    reads: RecentReads[str] = RecentReads(30.0, clock, max_entries=2)
    reads.read("a")
    clock.now += 10
    reads.read("b")
    reads.read("c")  # over the bound: "a", the oldest, forgotten

    assert (reads.wait_s("a"), reads.wait_s("b"), reads.wait_s("c")) == (0.0, 30.0, 30.0)
    clock.now += 31
    reads.read("d")  # "b" and "c" are past the interval: dropped
    assert (reads.wait_s("b"), reads.wait_s("d")) == (0.0, 30.0)
    never: RecentReads[str] = RecentReads(0.0, clock)
    never.read("a")
    assert never.wait_s("a") == 0.0
