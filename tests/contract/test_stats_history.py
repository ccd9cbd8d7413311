"""The StatsHistory contract, run against every registered history (``bootstrap.slices.history``).

Each is built by its registry entry's own builder, against a temporary SQLite file or the
shared Redis; a history a worker shares is also read back through a second instance.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import pytest
from returns.result import Success

from influencer_stats.algebras.history import DAY_S, StatsHistory
from influencer_stats.bootstrap.slices.history import HISTORIES
from influencer_stats.domain.history import StatsPoint
from influencer_stats.domain.models import CollectionId
from influencer_stats.interpreters.history.retention import Retention
from tests.contract.wired import wired
from tests.shared_redis import shared_redis_url

ONE, TWO = CollectionId("one"), CollectionId("two")
RETENTION = Retention(raw_s=2 * DAY_S, keep_s=10 * DAY_S)
MIDNIGHT = 1_700_006_400.0  # a UTC midnight
HOUR = 3_600.0

Open = Callable[[], Awaitable[StatsHistory]]


def point(at: float, n: int = 1, *, gap: bool = False) -> StatsPoint:
    if gap:
        return StatsPoint(at, 0, 0, 0, 0, 0, gap=True)
    return StatsPoint(at, impressions=n, engagements=2 * n, score=3 * n, videos=4, missing=1)


async def everything(history: StatsHistory, collection: CollectionId = ONE) -> tuple[StatsPoint, ...]:
    result = await history.points(collection, 0.0, float(2**40), 10_000)
    assert isinstance(result, Success), result
    points: tuple[StatsPoint, ...] = result.unwrap()
    return points


#: The histories every worker and host share (their entries keep nothing per process).
SHARED = [name for name in HISTORIES.names() if HISTORIES[name].per_process is None]


@asynccontextmanager
async def opener(name: str, tmp_path: Path) -> AsyncIterator[Open]:
    """Open instances of history ``name`` over one backend (one SQLite file, one Redis prefix)."""
    entry = HISTORIES[name]
    environ = {"INFLUENCER_STATS_HISTORY_RAW_DAYS": "2", "INFLUENCER_STATS_HISTORY_KEEP_DAYS": "10"}
    if "redis" in entry.needs:
        environ["REDIS_URL"] = shared_redis_url()
    async with AsyncExitStack() as stack:
        first = await stack.enter_async_context(wired(tmp_path, {"store": "dict"}, environ=environ))
        environ["INFLUENCER_STATS_REDIS_PREFIX"] = first.settings.redis_prefix

        async def open_one() -> StatsHistory:
            wiring = await stack.enter_async_context(wired(tmp_path, {"store": "dict"}, environ=environ))
            return await entry.build(wiring)

        yield open_one


@pytest.fixture(params=HISTORIES.names())
async def history(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StatsHistory]:
    async with opener(request.param, tmp_path) as open_one:
        yield await open_one()


async def test_a_recorded_point_is_read_back(history: StatsHistory) -> None:
    assert await history.record(ONE, point(MIDNIGHT)) == Success(None)

    assert await everything(history) == (point(MIDNIGHT),)


async def test_points_come_oldest_first_within_the_range_and_the_limit(history: StatsHistory) -> None:
    for hour in (3, 1, 4, 0, 2):  # recorded out of order
        await history.record(ONE, point(MIDNIGHT + hour * HOUR, hour))

    page = await history.points(ONE, MIDNIGHT + HOUR, MIDNIGHT + 4 * HOUR, 2)
    rest = await history.points(ONE, MIDNIGHT + 2 * HOUR + 0.001, MIDNIGHT + 4 * HOUR, 2)

    assert page == Success((point(MIDNIGHT + HOUR, 1), point(MIDNIGHT + 2 * HOUR, 2)))
    assert rest == Success((point(MIDNIGHT + 3 * HOUR, 3),))  # `until` is excluded


async def test_a_point_at_the_same_time_replaces_the_one_kept(history: StatsHistory) -> None:
    await history.record(ONE, point(MIDNIGHT, 1))
    await history.record(ONE, point(MIDNIGHT, 2))

    assert await everything(history) == (point(MIDNIGHT, 2),)


async def test_an_unknown_collection_has_no_points(history: StatsHistory) -> None:
    assert await history.points(TWO, 0.0, float(2**40), 10) == Success(())


async def test_forget_drops_every_point_of_one_collection_only(history: StatsHistory) -> None:
    await history.record(ONE, point(MIDNIGHT))
    await history.record(TWO, point(MIDNIGHT))

    assert await history.forget(ONE) == Success(None)

    assert await everything(history, ONE) == ()
    assert await everything(history, TWO) == (point(MIDNIGHT),)


async def test_gaps_are_kept_as_gaps(history: StatsHistory) -> None:
    await history.record(ONE, point(MIDNIGHT, gap=True))

    assert await everything(history) == (point(MIDNIGHT, gap=True),)


async def test_old_points_are_kept_one_a_day_then_dropped(history: StatsHistory) -> None:
    """Every 6 hours for 12 days; day 5 has only gaps, day 6 ends on a gap."""
    for hours in range(0, 12 * 24, 6):
        day = hours // 24
        gap = day == 5 or (day == 6 and hours % 24 == 18)
        await history.record(ONE, point(MIDNIGHT + hours * HOUR, hours, gap=gap))
    now = MIDNIGHT + (11 * 24 + 18) * HOUR  # the last point: retention counts back from it

    kept = await everything(history)

    assert all(p.at >= now - RETENTION.keep_s for p in kept)  # days 0 and 1 dropped
    old = [p for p in kept if p.at < now - RETENTION.raw_s]
    days = [int(p.at // DAY_S) for p in old]
    assert len(days) == len(set(days))  # one a day
    by_day = {int((p.at - MIDNIGHT) // DAY_S): p for p in old}
    assert by_day[5] == point(MIDNIGHT + (5 * 24 + 18) * HOUR, gap=True)  # only gaps: the last gap
    assert by_day[6] == point(MIDNIGHT + (6 * 24 + 12) * HOUR, 6 * 24 + 12)  # its last non-gap point
    assert by_day[4] == point(MIDNIGHT + (4 * 24 + 18) * HOUR, 4 * 24 + 18)
    recent = [p for p in kept if p.at >= now - RETENTION.raw_s]
    assert [p.at for p in recent] == [now - h * HOUR for h in range(48, -1, -6)]  # raw: every point


async def test_concurrent_records_are_all_kept(history: StatsHistory) -> None:
    await asyncio.gather(*(history.record(ONE, point(MIDNIGHT + n, n)) for n in range(100)))

    assert await everything(history) == tuple(point(MIDNIGHT + n, n) for n in range(100))


async def test_a_slot_is_claimed_once_and_never_after_a_later_one(history: StatsHistory) -> None:
    assert await history.claim(ONE, 7) == Success(True)
    assert await history.claim(ONE, 7) == Success(False)
    assert await history.claim(TWO, 7) == Success(True)  # per collection
    assert await history.claim(ONE, 8) == Success(True)
    assert await history.claim(ONE, 6) == Success(False)


async def test_forget_drops_the_claim_too(history: StatsHistory) -> None:
    await history.claim(ONE, 7)

    await history.forget(ONE)

    assert await history.claim(ONE, 7) == Success(True)


@pytest.mark.parametrize("name", SHARED)
async def test_a_history_a_worker_shares_is_seen_by_another_instance(name: str, tmp_path: Path) -> None:
    async with opener(name, tmp_path) as open_one:
        first, second = await open_one(), await open_one()

        await first.record(ONE, point(MIDNIGHT))

        assert await everything(second) == (point(MIDNIGHT),)


@pytest.mark.parametrize("name", SHARED)
async def test_of_two_instances_racing_for_one_slot_one_claims_it(name: str, tmp_path: Path) -> None:
    async with opener(name, tmp_path) as open_one:
        first, second = await open_one(), await open_one()

        claims = await asyncio.gather(*(h.claim(ONE, 3) for h in (first, second, first, second)))

        assert sorted(c.unwrap() for c in claims) == [False, False, False, True]


def thinned_by_hand(
    points: tuple[StatsPoint, ...], since: float, until: float, step: int, limit: int
) -> tuple[StatsPoint, ...]:
    """What ``thinned`` answers, from every point: each group's last figures (else its last gap)."""
    groups: dict[float, StatsPoint] = {}
    for p in points:
        if since <= p.at < until:
            held = groups.get(p.at // step * step)
            if held is None or not (p.gap and not held.gap):
                groups[p.at // step * step] = p
    return tuple(groups.values())[:limit]


@pytest.mark.parametrize("step", [1, 1_800, 3_600, 7 * 3_600, 86_400])
async def test_thinned_is_each_steps_last_figures_oldest_first(history: StatsHistory, step: int) -> None:
    """Every half hour for 44 hours; every fifth point a gap, hours 20 to 24 only gaps."""
    for n in range(88):
        gap = n % 5 == 0 or 40 <= n < 48
        await history.record(ONE, point(MIDNIGHT + n * HOUR / 2 + 0.25, n, gap=gap))
    kept = await everything(history)
    assert len(kept) == 88

    for since, until, limit in [
        (0.0, float(2**40), 1_000),
        (MIDNIGHT + 3.3 * HOUR, MIDNIGHT + 30.1 * HOUR, 1_000),  # both ends inside a group
        (MIDNIGHT + 5 * HOUR, float(2**40), 3),
        (MIDNIGHT + 50 * HOUR, float(2**40), 5),  # nothing there
    ]:
        thinned = await history.thinned(ONE, since, until, step, limit)
        assert thinned == Success(thinned_by_hand(kept, since, until, step, limit)), (since, until, limit)
    assert await history.thinned(TWO, 0.0, float(2**40), step, 10) == Success(())
