"""The quota count in the SQLite file (the joint ``quota__sqlite``): a real database file in a
temporary folder, the clock injected. The service restarted: test_quota_sqlite_restart.py."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Any

from returns.result import Failure, Result

from influencer_stats.config.resolve import resolve
from influencer_stats.domain.models import StoreUnavailable
from influencer_stats.interpreters.quota.quota_sqlite import SCHEMA, SqliteQuotaLedger
from influencer_stats.interpreters.sqlite_database import SqliteDatabase
from influencer_stats.testing.clock import ManualClock
from influencer_stats.testing.event_log import CapturingEventLog

DAY, NEXT_DAY = "2026-12-05", "2026-12-06"
KEEP_S = 3_600


@asynccontextmanager
async def opened(path: Path, clock: ManualClock) -> AsyncIterator[SqliteQuotaLedger]:
    """A process's ledger on the file at ``path``, closed when the block ends (the process stops)."""
    database = await SqliteDatabase.open(path)
    try:
        await database.create(SCHEMA)
        yield SqliteQuotaLedger(database, CapturingEventLog(), clock)
    finally:
        await database.close()


async def spend(ledger: SqliteQuotaLedger, units: int, budget: int = 5, day: str = DAY) -> list[object]:
    return [(await ledger.take(day, budget, KEEP_S)).value_or("spent") for _ in range(units)]


async def test_the_count_survives_a_restart_of_the_process(tmp_path: Path) -> None:
    clock = ManualClock(1_000.0)
    async with opened(tmp_path / "db.sqlite", clock) as before:
        assert await spend(before, 3) == [1, 2, 3]

    async with opened(tmp_path / "db.sqlite", clock) as after:
        assert await spend(after, 3) == [4, 5, "spent"]


async def test_two_processes_on_one_file_spend_one_budget_between_them(tmp_path: Path) -> None:
    clock = ManualClock(1_000.0)
    async with opened(tmp_path / "db.sqlite", clock) as one, opened(tmp_path / "db.sqlite", clock) as two:
        taken = await asyncio.gather(
            *(ledger.take(DAY, 5, KEEP_S) for ledger in (one, two) for _ in range(6))
        )

    assert sorted(t.value_or(0) for t in taken) == [0] * 7 + [1, 2, 3, 4, 5]


async def test_a_new_day_counts_from_nothing_and_days_past_are_dropped(tmp_path: Path) -> None:
    clock = ManualClock(1_000.0)
    async with opened(tmp_path / "db.sqlite", clock) as ledger:
        await spend(ledger, 5)
        clock.now += KEEP_S + 1  # past the first day's row
        assert await spend(ledger, 2, day=NEXT_DAY) == [1, 2]

    with closing(sqlite3.connect(tmp_path / "db.sqlite")) as db:
        assert [row[0] for row in db.execute("SELECT day FROM quota_spent")] == [NEXT_DAY]


def test_the_count_in_the_file_is_chosen_by_name_not_by_default() -> None:
    # Each unit waits for an fsync: a user who wants the count kept through restarts says so.
    double = {"YOUTUBE_API_URL": "http://127.0.0.1:9/youtube/v3/videos"}
    assert resolve(double, {}).choices.one("quota") == "memory"
    assert resolve(double, {"quota": "sqlite"}).choices.one("quota") == "sqlite"


class _CountingDatabase:
    """The real database, counting its transactions."""

    def __init__(self, database: SqliteDatabase) -> None:
        self.database = database
        self.runs = 0

    async def run(self, work: Callable[[Any], object]) -> Result[object, StoreUnavailable]:
        self.runs += 1
        return await self.database.run(work)


async def test_a_burst_of_calls_shares_transactions_and_still_never_overspends(tmp_path: Path) -> None:
    database = await SqliteDatabase.open(tmp_path / "db.sqlite")
    try:
        await database.create(SCHEMA)
        counting = _CountingDatabase(database)
        ledger = SqliteQuotaLedger(counting, CapturingEventLog(), ManualClock(0.0))  # type: ignore[arg-type]
        taken = await asyncio.gather(*(ledger.take(DAY, 40, KEEP_S) for _ in range(50)))
    finally:
        await database.close()

    assert [t.value_or(0) for t in taken] == [*range(1, 41), *[0] * 10]
    assert counting.runs == 2  # the first alone, the 49 that waited meanwhile together


class _FailingDatabase:
    async def run(self, work: Callable[[Any], object]) -> Result[object, StoreUnavailable]:
        return Failure(StoreUnavailable("sqlite: OperationalError: disk I/O error"))


async def test_a_database_that_fails_is_unreachable_and_says_why_in_the_log() -> None:
    log = CapturingEventLog()
    ledger = SqliteQuotaLedger(_FailingDatabase(), log, ManualClock(0.0))  # type: ignore[arg-type]

    assert await ledger.take(DAY, 5, KEEP_S) == Failure("unreachable")
    assert [e.event for e in log.events] == ["quota.ledger_unavailable"]
