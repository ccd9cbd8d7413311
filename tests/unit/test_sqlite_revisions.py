"""A database file written before revisions existed: opening it adds the column, once, and what
it held keeps working (the collection at ``NO_REVISION``; its kept source:
``test_sources_sqlite_revisions.py``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from influencer_stats.domain.models import NO_REVISION, Collection, CollectionId, VideoId
from influencer_stats.interpreters.collections.sqlite import SqliteCollectionStore
from influencer_stats.interpreters.sqlite_database import SqliteDatabase

C = CollectionId("launch")
A, B = VideoId("-4lB5EKS5Uk"), VideoId("-jlLkTtgWUk")


def old_file(path: Path) -> None:
    """The table as the release before revisions made it, one collection in it."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE collections (id TEXT PRIMARY KEY, videos TEXT NOT NULL) WITHOUT ROWID")
        db.execute("INSERT INTO collections VALUES (?, ?)", (C, f'["{A}"]'))
    db.close()


async def test_a_file_from_before_revisions_is_migrated_and_keeps_its_collection(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.sqlite3"
    old_file(path)
    database = await SqliteDatabase.open(path)
    try:
        store = await SqliteCollectionStore.create(database)
        await SqliteCollectionStore.create(database)  # a second worker opening it: nothing to add

        stored = (await store.get(C)).unwrap()
        assert stored == Collection(C, (A,)) and stored.revision == NO_REVISION

        replaced = (await store.replace_if(C, (A, B), NO_REVISION)).unwrap()
        assert replaced.revision != NO_REVISION
        assert (await store.get(C)).unwrap().revision == replaced.revision
    finally:
        await database.close()
