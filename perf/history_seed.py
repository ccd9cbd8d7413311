"""A large stats history written straight into a SQLite database file, before a service opens it
(issue 31): one stored collection with ``points`` snapshots ``interval_s`` apart, ending now, in
the tables the SQLite store and history create. 500,000 points (30 days at 5 s) take a few
seconds, instead of 500,000 calls of ``record``.

    python perf/history_seed.py /tmp/big.sqlite3 --points 500000 --interval 5

Then ``INFLUENCER_STATS_DB=/tmp/big.sqlite3 python main.py`` serves them (as collection
``big``); ``perf/history_load.py`` measures it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from influencer_stats.domain.models import CollectionId
from influencer_stats.interpreters.collections.sqlite import SqliteCollectionStore
from influencer_stats.interpreters.history.retention import Retention
from influencer_stats.interpreters.history.sqlite import SqliteStatsHistory
from influencer_stats.interpreters.sqlite_database import SqliteDatabase

COLLECTION = CollectionId("big")
#: Rows inserted per statement batch (bounded memory).
_BATCH = 50_000


def _rows(
    collection: str, points: int, interval_s: float, end: float, all_gaps: bool
) -> Iterator[tuple[str, float, int, int, int, int, int, int]]:
    first = end - (points - 1) * interval_s
    for n in range(points):
        gap = all_gaps or n % 211 == 0
        impressions = 0 if gap else 10_000_000 + 37 * n
        yield (collection, first + n * interval_s, impressions, impressions // 50, impressions // 40,
               0 if gap else 3, 0, int(gap))  # fmt: skip


async def _create_tables(path: Path) -> None:
    database = await SqliteDatabase.open(path)
    try:
        await SqliteCollectionStore.create(database)
        await SqliteStatsHistory.create(database, Retention(raw_s=1.0, keep_s=1.0))
    finally:
        await database.close()


def seed(
    path: Path,
    points: int,
    interval_s: float,
    *,
    videos: Sequence[str],
    collection: str = COLLECTION,
    all_gaps: bool = False,
    end: float | None = None,
) -> float:
    """Create the tables in ``path`` (if not there) and store ``collection`` (``videos``) with
    ``points`` snapshots ``interval_s`` apart ending at ``end`` (now), one in 211 a gap (or every
    one); the first point's time."""
    path.parent.mkdir(parents=True, exist_ok=True)
    asyncio.run(_create_tables(path))
    end = time.time() if end is None else end
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA synchronous=OFF")
        db.execute("BEGIN")
        db.execute(
            "INSERT OR REPLACE INTO collections (id, videos) VALUES (?, ?)",
            (collection, json.dumps(list(videos))),
        )
        rows = _rows(collection, points, interval_s, end, all_gaps)
        for _ in range(0, points, _BATCH):
            batch = [row for _, row in zip(range(_BATCH), rows, strict=False)]
            db.executemany("INSERT OR REPLACE INTO stats_history VALUES (?, ?, ?, ?, ?, ?, ?, ?)", batch)
        db.execute("COMMIT")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    return end - (points - 1) * interval_s


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path", type=Path)
    parser.add_argument("--points", type=int, default=500_000)
    parser.add_argument("--interval", type=float, default=5.0)
    options = parser.parse_args()
    started = time.perf_counter()
    seed(options.path, options.points, options.interval, videos=["dQw4w9WgXcQ"])
    print(f"{options.points:,} points in {time.perf_counter() - started:.1f} s: {options.path}")


if __name__ == "__main__":
    main()
