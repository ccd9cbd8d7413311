"""``SqliteDatabase.read``: reads on their own read-only connection and thread, beside the writes,
and a cancelled read stopped in SQLite (issue 31).

Each test holds one thread on a ``threading.Event`` it releases itself, so what runs beside what
is decided by the test, not by timing; ``asyncio.wait_for`` only bounds a test that would hang.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from returns.result import Failure, Success

from influencer_stats.domain.models import StoreUnavailable
from influencer_stats.interpreters.sqlite_database import SqliteDatabase, transaction

#: Bounds a wait that would otherwise hang a broken build (never reached when it works).
HANG = 30.0
#: A statement that never ends by itself (it counts for ever).
ENDLESS = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[SqliteDatabase]:
    database = await SqliteDatabase.open(tmp_path / "db.sqlite3")
    await database.create("CREATE TABLE IF NOT EXISTS t (k INTEGER PRIMARY KEY, v TEXT NOT NULL);")
    yield database
    await database.close()


def held(started: threading.Event, release: threading.Event) -> Callable[[sqlite3.Connection], str]:
    """Work that says it started, then waits for ``release``."""

    def work(db: sqlite3.Connection) -> str:
        started.set()
        release.wait(HANG)
        return "done"

    return work


async def until(event: threading.Event) -> None:
    assert await asyncio.to_thread(event.wait, HANG)


def insert(k: int) -> Callable[[sqlite3.Connection], None]:
    def work(db: sqlite3.Connection) -> None:
        with transaction(db):
            db.execute("INSERT INTO t VALUES (?, ?)", (k, f"v{k}"))

    return work


def count(db: sqlite3.Connection) -> int:
    found: int = db.execute("SELECT count(*) FROM t").fetchone()[0]
    return found


async def test_a_read_runs_while_the_writer_is_busy_and_sees_what_was_committed(
    database: SqliteDatabase,
) -> None:
    await database.run(insert(1))
    started, release = threading.Event(), threading.Event()
    writing = asyncio.ensure_future(database.run(held(started, release)))
    await until(started)  # the writer's one thread is taken

    read = await asyncio.wait_for(database.read(count), HANG)

    assert read == Success(1)
    assert not writing.done()
    release.set()
    assert await writing == Success("done")


async def test_writes_complete_while_a_read_is_in_flight(database: SqliteDatabase) -> None:
    started, release = threading.Event(), threading.Event()
    reading = asyncio.ensure_future(database.read(held(started, release)))
    await until(started)  # the reader's thread is taken

    writes = [await asyncio.wait_for(database.run(insert(k)), HANG) for k in range(3)]

    assert writes == [Success(None)] * 3
    assert not reading.done()
    release.set()
    assert await reading == Success("done")
    assert await database.read(count) == Success(3)


async def test_cancelling_a_read_stops_its_statement_and_frees_the_reader(database: SqliteDatabase) -> None:
    started = threading.Event()
    finished: list[str] = []

    def endless(db: sqlite3.Connection) -> None:
        started.set()
        try:
            db.execute(ENDLESS).fetchone()
        except sqlite3.OperationalError as exc:
            finished.append(str(exc))
            raise

    reading = asyncio.ensure_future(database.read(endless))
    await until(started)

    reading.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reading

    assert await asyncio.wait_for(database.read(count), HANG) == Success(0)  # the thread is free
    assert finished == ["interrupted"]  # stopped by SQLite, not left counting


async def test_a_read_cancelled_while_it_waits_never_runs(database: SqliteDatabase) -> None:
    started, release = threading.Event(), threading.Event()
    first = asyncio.ensure_future(database.read(held(started, release)))
    await until(started)
    ran: list[int] = []
    waiting = asyncio.ensure_future(database.read(lambda db: ran.append(1)))
    await asyncio.sleep(0)  # it is queued behind the first

    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    release.set()

    assert await first == Success("done")
    assert await database.read(count) == Success(0)
    assert ran == []


async def test_the_read_connection_cannot_write(database: SqliteDatabase) -> None:
    refused = await database.read(insert(1))

    assert isinstance(refused, Failure)
    assert isinstance(refused.failure(), StoreUnavailable)
    assert "readonly" in refused.failure().detail.replace("-", "").lower()
    assert await database.read(count) == Success(0)
