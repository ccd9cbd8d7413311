"""A durable store: a table of the service's SQLite database."""

from __future__ import annotations

import sqlite3

import orjson
from returns.result import Failure, Result, Success

from influencer_stats.domain.models import (
    Collection,
    CollectionId,
    CollectionNotFound,
    Created,
    Replaced,
    Revision,
    RevisionChanged,
    SaveOutcome,
    StoreUnavailable,
    VideoId,
    new_revision,
)
from influencer_stats.interpreters.sqlite_database import SqliteDatabase, transaction

_SCHEMA = """
CREATE TABLE IF NOT EXISTS collections (
    id       TEXT PRIMARY KEY,
    videos   TEXT NOT NULL,  -- a JSON array of video ids, in the user's order
    revision TEXT NOT NULL DEFAULT ''  -- new on every write ('': written before revisions)
) WITHOUT ROWID
"""


class SqliteCollectionStore:
    """``CollectionStore`` in a table of a ``SqliteDatabase``: durable once a write is acknowledged.

    Each write is one transaction, fsynced before ``save``/``delete`` returns
    (the database's rules: WAL, ``synchronous=FULL``, one thread, bounded
    waiting). A SQLite error is ``StoreUnavailable``. Several processes on one
    host may share the file (``--workers N``); several hosts need the ``redis``
    store. Build with ``await SqliteCollectionStore.create(database)``.
    """

    def __init__(self, database: SqliteDatabase) -> None:
        self._database = database

    @classmethod
    async def create(cls, database: SqliteDatabase) -> SqliteCollectionStore:
        """The store over ``database``, its table created if it is not there yet."""
        await database.create(_SCHEMA)
        await database.add_column("collections", "revision", "TEXT NOT NULL DEFAULT ''")
        return cls(database)

    async def get(
        self, collection_id: CollectionId
    ) -> Result[Collection, CollectionNotFound | StoreUnavailable]:
        def read(db: sqlite3.Connection) -> tuple[str, str] | None:
            row = db.execute(
                "SELECT videos, revision FROM collections WHERE id = ?", (collection_id,)
            ).fetchone()
            return None if row is None else (str(row[0]), str(row[1]))

        match await self._database.run(read):
            case Success(None):
                return Failure(CollectionNotFound(collection_id))
            case Success((str(videos), str(revision))):
                ids = tuple(VideoId(v) for v in orjson.loads(videos))
                return Success(Collection(collection_id, ids, Revision(revision)))
            case Failure(error):
                return Failure(error)
        raise AssertionError("unreachable")

    async def save(
        self, collection_id: CollectionId, videos: tuple[VideoId, ...]
    ) -> Result[SaveOutcome, StoreUnavailable]:
        encoded, revision = orjson.dumps(videos).decode(), new_revision()

        def write(db: sqlite3.Connection) -> bool:
            with transaction(db):
                existed = db.execute("SELECT 1 FROM collections WHERE id = ?", (collection_id,)).fetchone()
                db.execute(
                    "INSERT INTO collections (id, videos, revision) VALUES (?, ?, ?)"
                    " ON CONFLICT (id) DO UPDATE SET videos = excluded.videos, revision = excluded.revision",
                    (collection_id, encoded, revision),
                )
            return existed is None

        return (await self._database.run(write)).map(
            lambda created: Created(revision) if created else Replaced(revision)
        )

    async def replace_if(
        self, collection_id: CollectionId, videos: tuple[VideoId, ...], revision: Revision
    ) -> Result[Replaced, CollectionNotFound | RevisionChanged | StoreUnavailable]:
        encoded, written = orjson.dumps(videos).decode(), new_revision()

        def write(db: sqlite3.Connection) -> bool | None:
            """True: replaced; False: another revision; None: no collection. One transaction."""
            with transaction(db):
                changed = db.execute(
                    "UPDATE collections SET videos = ?, revision = ? WHERE id = ? AND revision = ?",
                    (encoded, written, collection_id, revision),
                ).rowcount
                if changed:
                    return True
                exists = db.execute("SELECT 1 FROM collections WHERE id = ?", (collection_id,)).fetchone()
                return None if exists is None else False

        match await self._database.run(write):
            case Success(True):
                return Success(Replaced(written))
            case Success(False):
                return Failure(RevisionChanged(collection_id))
            case Success(_):
                return Failure(CollectionNotFound(collection_id))
            case Failure(error):
                return Failure(error)
        raise AssertionError("unreachable")

    async def delete(
        self, collection_id: CollectionId
    ) -> Result[None, CollectionNotFound | StoreUnavailable]:
        def remove(db: sqlite3.Connection) -> int:
            with transaction(db):
                return db.execute("DELETE FROM collections WHERE id = ?", (collection_id,)).rowcount

        match await self._database.run(remove):
            case Success(0):
                return Failure(CollectionNotFound(collection_id))
            case Success(_):
                return Success(None)
            case Failure(error):
                return Failure(error)
        raise AssertionError("unreachable")

    async def ids(
        self, after: CollectionId | None, limit: int
    ) -> Result[tuple[CollectionId, ...], StoreUnavailable]:
        # A range scan of the primary key (the table is clustered on it); BINARY collation
        # orders by bytes, as the contract does. Every id is non-empty, so '' is before all.
        def read(db: sqlite3.Connection) -> tuple[CollectionId, ...]:
            rows = db.execute(
                "SELECT id FROM collections WHERE id > ? ORDER BY id LIMIT ?", (after or "", limit)
            )
            return tuple(CollectionId(row[0]) for row in rows)

        return await self._database.run(read)
