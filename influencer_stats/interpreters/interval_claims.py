"""Claims of one interval's work per collection, in process memory or in a SQLite table: what the
stats history (one snapshot an interval) and the collection sources (one refresh an interval) share.

A claim of ``slot`` (a whole number counting intervals) is taken by the first caller only, and
never once a later slot was claimed: ``True`` for that caller, ``False`` for every other. The Redis
one is ``redis_interval_claims``.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from influencer_stats.domain.models import CollectionId


class LatestClaims:
    """The last slot claimed per collection, for one process, least recently claimed first.

    At most ``bound`` collections: past it, claiming for a new one first forgets the one claimed
    least recently (which may then be claimed again, in its slot: a second run of its work).
    """

    def __init__(self, bound: int) -> None:
        self._bound = bound
        self._claimed: dict[CollectionId, int] = {}

    def claim(self, collection_id: CollectionId, slot: int) -> bool:
        last = self._claimed.pop(collection_id, None)
        if last is not None and last >= slot:
            self._claimed[collection_id] = last
            return False
        while len(self._claimed) >= self._bound:
            del self._claimed[next(iter(self._claimed))]
        self._claimed[collection_id] = slot
        return True

    def forget(self, collection_id: CollectionId) -> None:
        self._claimed.pop(collection_id, None)


@dataclass(frozen=True, slots=True)
class ClaimsTable:
    """A table of the last slot claimed per collection, ``name`` in the shared SQLite database.

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
