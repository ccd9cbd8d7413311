"""Collection sources: a table of the service's SQLite database (the store's file)."""

from __future__ import annotations

import sqlite3

from returns.result import Result

from influencer_stats.domain.models import CollectionId, KeptSource, Revision, StoreUnavailable
from influencer_stats.domain.sources import source_of
from influencer_stats.interpreters.sqlite_database import ClaimsTable, SqliteDatabase, transaction

_SCHEMA = """
CREATE TABLE IF NOT EXISTS collection_sources (
    id       TEXT PRIMARY KEY,  -- the collection's
    kind     TEXT NOT NULL,     -- 'playlist' or 'channel'
    source   TEXT NOT NULL,     -- the playlist's or the channel's id
    revision TEXT NOT NULL DEFAULT ''  -- the collection's when kept ('': kept before revisions)
) WITHOUT ROWID;
"""
#: The last interval whose re-read of its source was claimed, per collection.
_CLAIMS = ClaimsTable("collection_sources_claims")


class SqliteCollectionSources:
    """``CollectionSources`` in a table beside the collections, durable once ``put`` returns.

    Each write is one transaction, fsynced as the database's every write is. Several processes
    on one host share the file; several hosts need the ``redis`` sources.
    Build with ``await SqliteCollectionSources.create(database)``.
    """

    def __init__(self, database: SqliteDatabase) -> None:
        self._database = database

    @classmethod
    async def create(cls, database: SqliteDatabase) -> SqliteCollectionSources:
        """The sources over ``database``, their tables created if they are not there yet."""
        await database.create(_SCHEMA + _CLAIMS.schema)
        await database.add_column("collection_sources", "revision", "TEXT NOT NULL DEFAULT ''")
        return cls(database)

    async def get(self, collection_id: CollectionId) -> Result[KeptSource | None, StoreUnavailable]:
        def read(db: sqlite3.Connection) -> KeptSource | None:
            row = db.execute(
                "SELECT kind, source, revision FROM collection_sources WHERE id = ?", (collection_id,)
            ).fetchone()
            return None if row is None else KeptSource(source_of(row[0], row[1]), Revision(row[2]))

        return await self._database.run(read)

    async def put(
        self, collection_id: CollectionId, kept: KeptSource | None
    ) -> Result[None, StoreUnavailable]:
        def write(db: sqlite3.Connection) -> None:
            with transaction(db):
                if kept is None:
                    db.execute("DELETE FROM collection_sources WHERE id = ?", (collection_id,))
                    _CLAIMS.drop(db, collection_id)
                else:
                    db.execute(
                        "INSERT OR REPLACE INTO collection_sources (id, kind, source, revision)"
                        " VALUES (?, ?, ?, ?)",
                        (collection_id, kept.source.kind, kept.source.id, kept.revision),
                    )

        return await self._database.run(write)

    async def forget_if(
        self, collection_id: CollectionId, revision: Revision
    ) -> Result[None, StoreUnavailable]:
        def write(db: sqlite3.Connection) -> None:
            with transaction(db):
                if db.execute(
                    "DELETE FROM collection_sources WHERE id = ? AND revision = ?", (collection_id, revision)
                ).rowcount:
                    _CLAIMS.drop(db, collection_id)

        return await self._database.run(write)

    async def claim(self, collection_id: CollectionId, slot: int) -> Result[bool, StoreUnavailable]:
        def take(db: sqlite3.Connection) -> bool:
            with transaction(db):  # no claim without a source: none outlives a DELETE
                kept = db.execute("SELECT 1 FROM collection_sources WHERE id = ?", (collection_id,))
                return kept.fetchone() is not None and _CLAIMS.take(db, collection_id, slot)

        return await self._database.run(take)
