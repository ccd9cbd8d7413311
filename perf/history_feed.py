"""The simulated collections perf/history_bytes.py feeds each stats history: their hourly
snapshots from a fixed start, the one point a day the retention keeps, and how many points each
should hold at the end (computed without the retention, to check it)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable
from dataclasses import dataclass

from returns.result import Result, Success

from influencer_stats.algebras.history import DAY_S, StatsHistory
from influencer_stats.domain.history import StatsPoint
from influencer_stats.domain.models import CollectionId, StoreUnavailable
from influencer_stats.interpreters.history.retention import Retention
from perf.procs import LabError

HOUR_S = 3600.0
#: 2026-01-01 00:00 UTC: the first snapshot's hour.
START = 1_767_225_600.0
#: Records in flight at once (a batch of one hour's snapshots is gathered under this bound).
CONCURRENCY = 32

History = StatsHistory  # what is fed: any of its interpreters


# --- The simulated collections ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Plan:
    days: int
    retention: Retention

    @property
    def hours(self) -> int:
        return self.days * 24


def collection_id(index: int) -> CollectionId:
    """A UUID-shaped id, as the service's are."""
    return CollectionId(f"{index:08x}-5b0a-4b53-9d0c-6b7f2c1a9e01")


def is_gap(index: int, hour: int) -> bool:
    """About one hour in 211 the snapshot could not be taken."""
    return (hour * 31 + index * 17) % 211 == 0


def point(index: int, hour: int) -> StatsPoint:
    """Collection ``index``'s snapshot of ``hour``: taken some seconds into the hour (a pass
    over every collection takes a while), dated to the microsecond like ``time.time()``."""
    at = START + hour * HOUR_S + 1.5 + (index % 97) * 0.731 + (hour % 13) * 0.000_137
    if is_gap(index, hour):
        return StatsPoint(at, 0, 0, 0, 0, 0, gap=True)
    impressions = (
        10_000_000 * (1 + index % 9) + hour * (3_000 + 1_000 * (index % 13)) + (hour * 7_919) % 4_001
    )
    engagements = impressions * (20 + index % 30) // 1_000
    likes = impressions // (25 + index % 11)
    return StatsPoint(
        at,
        impressions,
        engagements,
        engagements + likes,
        20 + index % 80,
        1 if (hour + index) % 500 == 0 else 0,
    )


def survivor(index: int, day: int) -> int:
    """The hour a settled ``day`` keeps: its last that is not a gap, else its last."""
    for hour in range(day * 24 + 23, day * 24 - 1, -1):
        if not is_gap(index, hour):
            return hour
    return day * 24 + 23


def last_at(plan: Plan, index: int) -> float:
    return point(index, plan.hours - 1).at


def settled_before(plan: Plan, index: int) -> int:
    """The first day (counted from ``START``) the retention has not yet reduced to one point at the end."""
    raw_from = last_at(plan, index) - plan.retention.raw_s
    return int(raw_from // DAY_S) - int(START // DAY_S)


@functools.cache
def expected_count(plan: Plan, index: int) -> int:
    """How many points the retention keeps at the end, counted without it: every point of the
    raw period, and of each older UTC day the point it was reduced to (its last that is not a
    gap, else its last; chosen while every point of the day was still kept), unless that point
    is older than ``keep_s``. (Not ``Retention.kept`` of every point at the end: where the keep
    limit cuts a day after its last point that is not a gap, only a later gap of that day is
    within it, and that gap went when the day was reduced.)"""
    end = last_at(plan, index)
    dropped_before, raw_from = end - plan.retention.keep_s, end - plan.retention.raw_s
    reduced: dict[int, StatsPoint] = {}
    raw = 0
    for hour in range(plan.hours):
        p = point(index, hour)
        if p.at >= raw_from:
            raw += 1
            continue
        day = int(p.at // DAY_S)
        if day not in reduced or not p.gap or reduced[day].gap:
            reduced[day] = p
    return raw + sum(1 for p in reduced.values() if p.at >= dropped_before)


async def feed(history: History, plan: Plan, collections: int, settled: bool) -> int:
    """Record the feed's snapshots, hour by hour (each hour's in parallel, at most
    ``CONCURRENCY`` at once); claim every collection for the last hour. The records made."""
    gate = asyncio.Semaphore(CONCURRENCY)
    failures: list[str] = []

    async def one(call: Awaitable[Result[object, StoreUnavailable]]) -> None:
        async with gate:  # the call starts only once awaited
            outcome = await call
        if not isinstance(outcome, Success):
            failures.append(str(outcome.failure()))

    boundary = [settled_before(plan, index) if settled else 0 for index in range(collections)]
    records = 0
    for hour in range(plan.hours):
        day = hour // 24
        if hour % 24 == 0:
            kept_hour = [survivor(index, day) for index in range(collections)]
        batch = [i for i in range(collections) if day >= boundary[i] or kept_hour[i] == hour]
        if hour == plan.hours - 1:
            slot = int(point(0, hour).at // HOUR_S)
            await asyncio.gather(
                *(one(history.claim(collection_id(index), slot)) for index in range(collections))
            )
        await asyncio.gather(
            *(one(history.record(collection_id(index), point(index, hour))) for index in batch)
        )
        records += len(batch)
        if failures:
            raise LabError(f"{len(failures)} calls failed, the first: {failures[0]}")
    return records


# --- Measures ------------------------------------------------------------------------------
