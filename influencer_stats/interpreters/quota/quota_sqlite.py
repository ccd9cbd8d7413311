"""The quota ledger in the SQLite database: one count per quota day, kept through restarts and
shared by the processes of one host."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from returns.result import Failure, Result, Success

from influencer_stats.algebras import EventLog
from influencer_stats.algebras.quota import Refusal
from influencer_stats.interpreters.sqlite_database import SqliteDatabase, transaction

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS quota_spent (
    day     TEXT PRIMARY KEY,   -- the quota day's key (QuotaDay.at)
    spent   INTEGER NOT NULL,   -- units spent on it
    expires REAL NOT NULL       -- Unix time after which the row is dropped (an hour past its day)
) WITHOUT ROWID;
"""

#: One unit more unless the budget is spent: no row comes back when it is.
_TAKE: Final = (
    "INSERT INTO quota_spent VALUES (?, 1, ?) ON CONFLICT (day)"
    " DO UPDATE SET spent = spent + 1 WHERE spent < ? RETURNING spent"
)


class SqliteQuotaLedger:
    """``QuotaLedger`` in a table of the shared SQLite database (``INFLUENCER_STATS_DB``), made
    with ``SCHEMA`` before.

    Each unit is one statement on the database's writer thread, fsynced before
    the call is made (``synchronous=FULL``; the takes that wait meanwhile share
    the next transaction, so a burst of calls costs two fsyncs, not one each:
    about 5 ms each on the lab's disk): a unit counted is never forgotten,
    through a restart, a ``kill -9`` or a power cut, so a restarted process
    does not spend the day's budget again. The processes of one host (``--workers
    N``) share the file, and SQLite serialises their writes, so they spend one
    budget between them; hosts do not share it (``--quota redis``). Rows of days
    past are dropped an hour after their day ends. The database failing is
    ``"unreachable"``: no call is made that was not counted.
    """

    def __init__(self, database: SqliteDatabase, log: EventLog, clock: Callable[[], float]) -> None:
        self._database = database
        self._log = log
        self._clock = clock
        self._waiting: list[_Take] = []  # takes not yet in a transaction
        self._turn = asyncio.Lock()  # one transaction of this process at a time

    async def take(self, day: str, budget: int, keep_s: int) -> Result[int, Refusal]:
        mine = _Take(day, budget, keep_s, asyncio.get_running_loop().create_future())
        self._waiting.append(mine)
        async with self._turn:
            if not mine.answer.done():  # else a transaction before took it with others
                takes, self._waiting = self._waiting, []
                # Shielded: a caller gone leaves the others' answers to come.
                await asyncio.shield(self._commit(takes))
        return mine.answer.result()

    async def _commit(self, takes: list[_Take]) -> None:
        """Every take waiting, in one transaction: one fsync for a burst of calls, not one each."""
        now = self._clock()

        def commit(db: sqlite3.Connection) -> list[int | None]:
            with transaction(db):
                db.execute("DELETE FROM quota_spent WHERE expires < ?", (now,))
                rows = [db.execute(_TAKE, (t.day, now + t.keep_s, t.budget)).fetchone() for t in takes]
            return [None if row is None else int(row[0]) for row in rows]

        done = await self._database.run(commit)
        if isinstance(done, Failure):
            self._log.warning("quota.ledger_unavailable", error=done.failure().detail)
        answers: list[Result[int, Refusal]] = [
            Failure("spent") if spent is None else Success(spent) for spent in done.value_or([])
        ] or [Failure("unreachable")] * len(takes)
        for take, answer in zip(takes, answers, strict=True):
            if not take.answer.done():
                take.answer.set_result(answer)


@dataclass(frozen=True, slots=True)
class _Take:
    day: str
    budget: int
    keep_s: int
    answer: asyncio.Future[Result[int, Refusal]]
