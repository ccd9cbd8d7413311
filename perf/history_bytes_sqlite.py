"""The SQLite history's measure for perf/history_bytes.py (the joint ``history__sqlite``'s file):
the database file's size after a checkpoint, and its layout by table."""

from __future__ import annotations

import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from influencer_stats.interpreters.history.sqlite import SqliteStatsHistory
from influencer_stats.interpreters.sqlite_database import SqliteDatabase
from perf.history_bytes import Measure, read_back
from perf.history_feed import Plan, feed
from perf.procs import LabError


async def measure_all(
    plan: Plan, feeds: list[tuple[str, int]], keep: int, out: Path, done: Callable[[Measure], None]
) -> None:
    """Each feed into a database of its own, in a scratch folder of ``out`` removed after."""
    with tempfile.TemporaryDirectory(dir=out) as scratch:
        for name, n in feeds:
            done(await measure_sqlite(plan, name, n, keep, Path(scratch)))


async def measure_sqlite(plan: Plan, name: str, collections: int, keep: int, directory: Path) -> Measure:
    path = directory / f"history-{name.replace(' ', '-')}.db"
    database = await SqliteDatabase.open(path)
    try:
        await database.run(lambda db: db.execute("PRAGMA synchronous=OFF"))
        history = await SqliteStatsHistory.create(database, plan.retention)
        started = time.monotonic()
        records = await feed(history, plan, collections, name == "settled")
        seconds = time.monotonic() - started
        layout = (await database.run(_sqlite_layout)).unwrap()
        size = path.stat().st_size
        wal = path.with_name(path.name + "-wal")
        measure = Measure(
            "sqlite", name, collections, records, seconds, size, "file size after wal_checkpoint(TRUNCATE)"
        )
        measure.notes.append(
            f"page size {layout['page_size']:,} B, {layout['page_count']:,} pages, "
            f"{layout['freelist_count']:,} free; WAL after the checkpoint "
            f"{wal.stat().st_size if wal.exists() else 0:,} B; by table (dbstat): "
            + ", ".join(f"{table} {size:,} B" for table, size in layout["tables"].items())
        )
        await read_back(history, plan, measure, keep)
        return measure
    finally:
        await database.close()


def _sqlite_layout(db: sqlite3.Connection) -> dict[str, Any]:
    busy, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    if busy:
        raise LabError("wal_checkpoint(TRUNCATE) was blocked")
    layout: dict[str, Any] = {
        pragma: db.execute(f"PRAGMA {pragma}").fetchone()[0]
        for pragma in ("page_size", "page_count", "freelist_count")
    }
    try:
        rows = db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY name").fetchall()
    except sqlite3.OperationalError:  # built without SQLITE_ENABLE_DBSTAT_VTAB
        rows = []
    layout["tables"] = dict(rows)
    return layout
