"""One SQLite file, written from one dedicated thread and read from another: what every SQLite
interpreter keeps its tables in."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from returns.result import Failure, Result, Success

from influencer_stats.domain.models import CollectionId, StoreUnavailable

_T = TypeVar("_T")
#: SQLite virtual machine instructions between two checks whether a read was cancelled.
_PROGRESS_OPS = 1_000


class _Read:
    """One call of ``read``: whether its caller has gone (set on the loop, read on the reader thread)."""

    __slots__ = ("cancelled",)

    def __init__(self) -> None:
        self.cancelled = False


def _connect(path: Path, *, read_only: bool) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        db.execute("PRAGMA busy_timeout=5000")
        if read_only:
            db.execute("PRAGMA query_only=1")
        else:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            # Writable, here and now: a read-only file or folder fails at open, not at the first write.
            db.execute("BEGIN IMMEDIATE")
            db.execute("ROLLBACK")
    except BaseException:
        db.close()
        raise
    return db


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

    - ``read`` runs on a second, read-only connection on its own thread: WAL
      lets it read beside the writer, so a long read (a history query) neither
      waits behind the writes nor holds them up. A read whose caller is
      cancelled (a deadline, a client gone) is stopped at SQLite's next
      progress check (every ``_PROGRESS_OPS`` instructions), not run to its end.

    Open with ``await SqliteDatabase.open(path)``; ``close`` on shutdown.
    Several processes on one host may share the file (``--workers N``): WAL
    lets readers run beside the one writer, ``BEGIN IMMEDIATE`` and the busy
    timeout serialize writers, and a write acknowledged by one is seen by the
    next read of any other.
    """

    def __init__(
        self,
        connection: sqlite3.Connection,
        executor: ThreadPoolExecutor,
        max_pending: int,
        reader: tuple[sqlite3.Connection, ThreadPoolExecutor],
    ) -> None:
        self._db = connection
        self._executor = executor
        self._gate = asyncio.Semaphore(max_pending)
        self._reader, self._reader_executor = reader
        self._read_gate = asyncio.Semaphore(max_pending)
        self._reading: _Read | None = None  # the read on the reader thread now, if any
        self._reader.set_progress_handler(self._stop_reading, _PROGRESS_OPS)

    @classmethod
    async def open(cls, path: Path, *, max_pending: int = 256) -> SqliteDatabase:
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite")
        reader_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-read")
        loop = asyncio.get_running_loop()
        try:
            connection = await loop.run_in_executor(executor, lambda: _connect(path, read_only=False))
            try:  # after the writer: the file exists and is in WAL mode
                reader = await loop.run_in_executor(reader_executor, lambda: _connect(path, read_only=True))
            except BaseException:
                await loop.run_in_executor(executor, connection.close)
                raise
        except BaseException:
            executor.shutdown(wait=False)
            reader_executor.shutdown(wait=False)
            raise
        return cls(connection, executor, max_pending, (reader, reader_executor))

    async def create(self, schema: str) -> None:
        """Run ``schema`` (``CREATE … IF NOT EXISTS`` statements) once, at build time; raises on error."""
        await asyncio.get_running_loop().run_in_executor(self._executor, self._db.executescript, schema)

    async def add_column(self, table: str, column: str, declaration: str) -> None:
        """Add ``column`` to ``table`` of a file made before it existed (at build time; raises on
        error): one ``BEGIN IMMEDIATE`` transaction, so workers starting together add it once."""

        def migrate(db: sqlite3.Connection) -> None:
            with transaction(db):
                present = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
                if column not in present:
                    db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")

        await asyncio.get_running_loop().run_in_executor(self._executor, migrate, self._db)

    async def run(self, work: Callable[[sqlite3.Connection], _T]) -> Result[_T, StoreUnavailable]:
        """``work(connection)`` on the database's thread; a SQLite error is ``StoreUnavailable``."""
        async with self._gate:
            try:
                return Success(
                    await asyncio.get_running_loop().run_in_executor(self._executor, work, self._db)
                )
            except sqlite3.Error as exc:
                return Failure(StoreUnavailable(f"sqlite: {type(exc).__name__}: {str(exc)[:200]}"))

    async def read(self, work: Callable[[sqlite3.Connection], _T]) -> Result[_T, StoreUnavailable]:
        """``work(connection)`` on the read-only connection's thread, beside the writes; a SQLite
        error is ``StoreUnavailable``. Cancelling the caller stops ``work``'s statement too."""
        call = _Read()

        def run() -> _T:
            self._reading = call
            try:
                if call.cancelled:  # its caller went while it waited for the thread
                    raise sqlite3.OperationalError("interrupted")
                return work(self._reader)
            finally:
                self._reading = None

        async with self._read_gate:
            try:
                return Success(await asyncio.get_running_loop().run_in_executor(self._reader_executor, run))
            except sqlite3.Error as exc:
                return Failure(StoreUnavailable(f"sqlite: {type(exc).__name__}: {str(exc)[:200]}"))
            except asyncio.CancelledError:
                call.cancelled = True  # the progress handler stops its statement
                raise

    def _stop_reading(self) -> int:
        """The reader's progress handler: non-zero interrupts the statement of a cancelled read."""
        reading = self._reading
        return 1 if reading is not None and reading.cancelled else 0

    async def ping(self) -> bool:
        """Whether the database answers a trivial query (for ``/readyz``)."""
        return isinstance(await self.run(lambda db: db.execute("SELECT 1").fetchone()), Success)

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._reader_executor, self._reader.close)
        self._reader_executor.shutdown(wait=True)
        await loop.run_in_executor(self._executor, self._db.close)
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


@dataclass(frozen=True, slots=True)
class ClaimsTable:
    """A table of the last slot claimed per collection, ``name`` in the shared SQLite database: the
    claims of an interval (``interval_claims`` says what a claim is) of the SQLite history and sources.

    Its statements run on the database's thread (inside ``SqliteDatabase.run``); ``schema`` goes to
    ``SqliteDatabase.create`` with the interpreter's own tables.
    """

    name: str

    @property
    def schema(self) -> str:
        return f"""
CREATE TABLE IF NOT EXISTS {self.name} (
    collection TEXT PRIMARY KEY,
    slot       INTEGER NOT NULL  -- the last interval whose work was claimed
) WITHOUT ROWID;
"""

    def take(self, db: sqlite3.Connection, collection_id: CollectionId, slot: int) -> bool:
        """Claim ``slot`` for the collection: one statement, so one transaction."""
        changed = db.execute(
            f"INSERT INTO {self.name} VALUES (?, ?) ON CONFLICT (collection)"
            " DO UPDATE SET slot = excluded.slot WHERE excluded.slot > slot",
            (collection_id, slot),
        ).rowcount
        return bool(changed == 1)

    def drop(self, db: sqlite3.Connection, collection_id: CollectionId) -> None:
        """Forget the collection's claim (within the caller's transaction)."""
        db.execute(f"DELETE FROM {self.name} WHERE collection = ?", (collection_id,))
