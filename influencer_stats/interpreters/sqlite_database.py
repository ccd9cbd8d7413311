"""One SQLite file, driven from one dedicated thread: what every SQLite interpreter keeps its tables in."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from returns.result import Failure, Result, Success

from influencer_stats.domain.models import StoreUnavailable

_T = TypeVar("_T")


class SqliteDatabase:
    """A SQLite database file, one connection on one thread, shared by the interpreters in it.

    - WAL journal with ``synchronous=FULL``: a transaction is fsynced to the
      WAL before it returns, so an acknowledged write survives a ``kill -9``
      of the process and a power cut. (``NORMAL`` would survive the first but
      may lose the last writes of the second.)
    - All SQLite work runs on one dedicated thread, never on the event loop;
      one connection, so writes are serialised. At most ``max_pending``
      operations wait for that thread; further callers wait their turn on the
      loop (back-pressure, not an unbounded queue).
    - ``run`` turns a SQLite error (disk full, file unreadable, locked beyond
      ``busy_timeout``) into ``StoreUnavailable``.
    - Each interpreter creates its own tables (``create``); the file's format
      is SQLite's, so interpreters of different algebras share it safely.

    Open with ``await SqliteDatabase.open(path)``; ``close`` on shutdown.
    Several processes on one host may share the file (``--workers N``): WAL
    lets readers run beside the one writer, ``BEGIN IMMEDIATE`` and the busy
    timeout serialize writers, and a write acknowledged by one is seen by the
    next read of any other.
    """

    def __init__(
        self, connection: sqlite3.Connection, executor: ThreadPoolExecutor, max_pending: int
    ) -> None:
        self._db = connection
        self._executor = executor
        self._gate = asyncio.Semaphore(max_pending)

    @classmethod
    async def open(cls, path: Path, *, max_pending: int = 256) -> SqliteDatabase:
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite")

        def connect() -> sqlite3.Connection:
            db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.execute("PRAGMA busy_timeout=5000")
            # Writable, here and now: a read-only file or folder fails at open, not at the first write.
            db.execute("BEGIN IMMEDIATE")
            db.execute("ROLLBACK")
            return db

        loop = asyncio.get_running_loop()
        try:
            connection = await loop.run_in_executor(executor, connect)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(connection, executor, max_pending)

    async def create(self, schema: str) -> None:
        """Run ``schema`` (``CREATE … IF NOT EXISTS`` statements) once, at build time; raises on error."""
        await asyncio.get_running_loop().run_in_executor(self._executor, self._db.executescript, schema)

    async def run(self, work: Callable[[sqlite3.Connection], _T]) -> Result[_T, StoreUnavailable]:
        """``work(connection)`` on the database's thread; a SQLite error is ``StoreUnavailable``."""
        async with self._gate:
            try:
                return Success(
                    await asyncio.get_running_loop().run_in_executor(self._executor, work, self._db)
                )
            except sqlite3.Error as exc:
                return Failure(StoreUnavailable(f"sqlite: {type(exc).__name__}: {str(exc)[:200]}"))

    async def ping(self) -> bool:
        """Whether the database answers a trivial query (for ``/readyz``)."""
        return isinstance(await self.run(lambda db: db.execute("SELECT 1").fetchone()), Success)

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._executor, self._db.close)
        self._executor.shutdown(wait=True)


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE … COMMIT, or ROLLBACK on any error."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
