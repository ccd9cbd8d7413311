"""A stats history: a table of the service's SQLite database (the store's file)."""

from __future__ import annotations

import sqlite3

from returns.result import Result

from influencer_stats.algebras.history import DAY_S
from influencer_stats.domain.history import StatsPoint
from influencer_stats.domain.models import CollectionId, StoreUnavailable
from influencer_stats.interpreters.history.retention import Retention
from influencer_stats.interpreters.sqlite_database import ClaimsTable, SqliteDatabase, transaction

_SCHEMA = """
CREATE TABLE IF NOT EXISTS stats_history (
    collection  TEXT NOT NULL,
    at          REAL NOT NULL,
    impressions INTEGER NOT NULL,
    engagements INTEGER NOT NULL,
    score       INTEGER NOT NULL,
    videos      INTEGER NOT NULL,
    missing     INTEGER NOT NULL,
    gap         INTEGER NOT NULL,
    PRIMARY KEY (collection, at)
) WITHOUT ROWID;
"""
#: The last interval whose snapshot was claimed, per collection.
_CLAIMS = ClaimsTable("stats_history_claims")

#: Of the points older than the raw period, all but each day's last non-gap one (its last gap
#: when it has none): a range scan of one collection's oldest rows, one per day once settled.
_DOWNSAMPLE = """
DELETE FROM stats_history WHERE collection = :c AND at < :raw AND at NOT IN (
    SELECT COALESCE(MAX(CASE WHEN gap = 0 THEN at END), MAX(at)) FROM stats_history
    WHERE collection = :c AND at < :raw GROUP BY CAST(at / :day AS INTEGER)
)
"""


_COLUMNS = (
    "SELECT at, impressions, engagements, score, videos, missing, gap FROM stats_history"
    " WHERE collection = ? AND at >= ?"
)
_FIRST = "SELECT at FROM stats_history WHERE collection = ? AND at >= ? AND at < ? ORDER BY at LIMIT 1"
_LAST_FIGURES = _COLUMNS + " AND at < ? AND gap = 0 ORDER BY at DESC LIMIT 1"
_LAST = _COLUMNS + " AND at < ? ORDER BY at DESC LIMIT 1"


def _point(row: tuple[float, int, int, int, int, int, int]) -> StatsPoint:
    at, impressions, engagements, score, videos, missing, gap = row
    return StatsPoint(at, impressions, engagements, score, videos, missing, bool(gap))


class SqliteStatsHistory:
    """``StatsHistory`` in a table beside the collections, durable once ``record`` returns.

    Each ``record`` is one transaction (the point, then the collection's
    retention), fsynced as the database's every write is. Reads run on the
    database's read connection, beside the writes, and stop when their caller
    is cancelled. Several processes on
    one host share the file; several hosts need the ``redis`` history.
    Build with ``await SqliteStatsHistory.create(database, retention)``.
    """

    def __init__(self, database: SqliteDatabase, retention: Retention) -> None:
        self._database = database
        self._retention = retention

    @classmethod
    async def create(cls, database: SqliteDatabase, retention: Retention) -> SqliteStatsHistory:
        """The history over ``database``, its table created if it is not there yet."""
        await database.create(_SCHEMA + _CLAIMS.schema)
        return cls(database, retention)

    async def record(self, collection_id: CollectionId, point: StatsPoint) -> Result[None, StoreUnavailable]:
        retention = self._retention

        def write(db: sqlite3.Connection) -> None:
            with transaction(db):
                db.execute(
                    "INSERT OR REPLACE INTO stats_history VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (collection_id, point.at, point.impressions, point.engagements, point.score,
                     point.videos, point.missing, int(point.gap)),
                )  # fmt: skip
                db.execute(
                    "DELETE FROM stats_history WHERE collection = ? AND at < ?",
                    (collection_id, point.at - retention.keep_s),
                )
                db.execute(_DOWNSAMPLE, {"c": collection_id, "raw": point.at - retention.raw_s, "day": DAY_S})

        return await self._database.run(write)

    async def points(
        self, collection_id: CollectionId, since: float, until: float, limit: int
    ) -> Result[tuple[StatsPoint, ...], StoreUnavailable]:
        def read(db: sqlite3.Connection) -> tuple[StatsPoint, ...]:
            rows = db.execute(
                _COLUMNS + " AND at < ? ORDER BY at LIMIT ?", (collection_id, since, until, limit)
            )
            return tuple(_point(row) for row in rows)

        return await self._database.read(read)

    async def thinned(
        self, collection_id: CollectionId, since: float, until: float, step: int, limit: int
    ) -> Result[tuple[StatsPoint, ...], StoreUnavailable]:
        """Per step, two seeks on the primary key (collection, at): the group's first point (where
        it starts), then its last that is not a gap, walking back from its end (its last point when
        the walk finds none): at most ``2 * limit`` seeks, whatever the points in between."""

        def read(db: sqlite3.Connection) -> tuple[StatsPoint, ...]:
            kept: list[StatsPoint] = []
            start = since
            for _ in range(limit):
                first = db.execute(_FIRST, (collection_id, start, until)).fetchone()
                if first is None:
                    break
                bucket = first[0] // step * step
                end = min(bucket + step, until)
                row = db.execute(_LAST_FIGURES, (collection_id, start, end)).fetchone()
                row = row or db.execute(_LAST, (collection_id, start, end)).fetchone()
                kept.append(_point(row))
                start = bucket + step
            return tuple(kept)

        return await self._database.read(read)

    async def forget(self, collection_id: CollectionId) -> Result[None, StoreUnavailable]:
        def remove(db: sqlite3.Connection) -> None:
            with transaction(db):
                db.execute("DELETE FROM stats_history WHERE collection = ?", (collection_id,))
                _CLAIMS.drop(db, collection_id)

        return await self._database.run(remove)

    async def claim(self, collection_id: CollectionId, slot: int) -> Result[bool, StoreUnavailable]:
        return await self._database.run(lambda db: _CLAIMS.take(db, collection_id, slot))
