"""A durable store in one SQLite file, driven from one dedicated thread."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import orjson
from returns.result import Failure, Result, Success

from influencer_stats.domain.models import (
    Collection,
    CollectionId,
    CollectionNotFound,
    Created,
    Replaced,
    SaveOutcome,
    StoreUnavailable,
    VideoId,
)

_T = TypeVar("_T")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS collections (
    id     TEXT PRIMARY KEY,
    videos TEXT NOT NULL  -- a JSON array of video ids, in the user's order
) WITHOUT ROWID
"""


class SqliteCollectionStore:
    """``CollectionStore`` in SQLite: durable once a write is acknowledged.

    - WAL journal with ``synchronous=FULL``: each write is one transaction,
      fsynced to the WAL before ``save``/``delete`` returns, so it survives a
      ``kill -9`` of the process and a power cut. (``NORMAL`` would survive
      the first but may lose the last writes of the second.)
    - All SQLite work runs on one dedicated thread, never on the event loop;
      one connection, so writes are serialised and a save is atomic. At most
      ``max_pending`` operations wait for that thread; further callers wait
      their turn on the loop (back-pressure, not an unbounded queue).
    - A SQLite error (disk full, file unreadable, locked beyond
      ``busy_timeout``) is ``StoreUnavailable``.

    Open with ``await SqliteCollectionStore.open(path)``; ``close`` on shutdown.
    Several processes on one host may share the file (``--workers N``): WAL
    lets readers run beside the one writer, ``BEGIN IMMEDIATE`` and the busy
    timeout serialize writers, and a write acknowledged by one is seen by the
    next read of any other. Several hosts need the ``redis`` store.
    """

    def __init__(
        self, connection: sqlite3.Connection, executor: ThreadPoolExecutor, max_pending: int
    ) -> None:
        self._db = connection
        self._executor = executor
        self._gate = asyncio.Semaphore(max_pending)

    @classmethod
    async def open(cls, path: Path, *, max_pending: int = 256) -> SqliteCollectionStore:
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite")

        def connect() -> sqlite3.Connection:
            db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.execute("PRAGMA busy_timeout=5000")
            db.execute(_SCHEMA)
            return db

        loop = asyncio.get_running_loop()
        try:
            connection = await loop.run_in_executor(executor, connect)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(connection, executor, max_pending)

    async def ping(self) -> bool:
        """Whether the database answers a trivial query (for ``/readyz``)."""
        return isinstance(await self._run(lambda db: db.execute("SELECT 1").fetchone()), Success)

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._executor, self._db.close)
        self._executor.shutdown(wait=True)

    async def _run(self, work: Callable[[sqlite3.Connection], _T]) -> Result[_T, StoreUnavailable]:
        async with self._gate:
            try:
                return Success(
                    await asyncio.get_running_loop().run_in_executor(self._executor, work, self._db)
                )
            except sqlite3.Error as exc:
                return Failure(StoreUnavailable(f"sqlite: {type(exc).__name__}: {str(exc)[:200]}"))

    async def get(
        self, collection_id: CollectionId
    ) -> Result[Collection, CollectionNotFound | StoreUnavailable]:
        def read(db: sqlite3.Connection) -> str | None:
            row = db.execute("SELECT videos FROM collections WHERE id = ?", (collection_id,)).fetchone()
            return None if row is None else str(row[0])

        match await self._run(read):
            case Success(None):
                return Failure(CollectionNotFound(collection_id))
            case Success(str(videos)):
                return Success(Collection(collection_id, tuple(VideoId(v) for v in orjson.loads(videos))))
            case Failure(error):
                return Failure(error)
        raise AssertionError("unreachable")

    async def save(
        self, collection_id: CollectionId, videos: tuple[VideoId, ...]
    ) -> Result[SaveOutcome, StoreUnavailable]:
        encoded = orjson.dumps(videos).decode()

        def write(db: sqlite3.Connection) -> bool:
            with _transaction(db):
                existed = db.execute("SELECT 1 FROM collections WHERE id = ?", (collection_id,)).fetchone()
                db.execute(
                    "INSERT INTO collections (id, videos) VALUES (?, ?)"
                    " ON CONFLICT (id) DO UPDATE SET videos = excluded.videos",
                    (collection_id, encoded),
                )
            return existed is None

        return (await self._run(write)).map(lambda created: Created() if created else Replaced())

    async def delete(
        self, collection_id: CollectionId
    ) -> Result[None, CollectionNotFound | StoreUnavailable]:
        def remove(db: sqlite3.Connection) -> int:
            with _transaction(db):
                return db.execute("DELETE FROM collections WHERE id = ?", (collection_id,)).rowcount

        match await self._run(remove):
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

        return await self._run(read)


@contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE … COMMIT, or ROLLBACK on any error."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
