"""A database file written before revisions existed: opening it adds the columns, once, and a
collection read from a playlist keeps its source (both at ``NO_REVISION``, so still its source)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from returns.result import Success

from influencer_stats.domain.models import (
    NO_REVISION,
    Collection,
    CollectionId,
    CollectionSource,
    KeptSource,
    VideoId,
)
from influencer_stats.interpreters.collections.sqlite import SqliteCollectionStore
from influencer_stats.interpreters.sources.sqlite import SqliteCollectionSources
from influencer_stats.interpreters.sqlite_database import SqliteDatabase

C = CollectionId("launch")
A, B = VideoId("-4lB5EKS5Uk"), VideoId("-jlLkTtgWUk")
PLAYLIST = CollectionSource("playlist", "PLlaunch")


def old_file(path: Path) -> None:
    """The two tables as the release before revisions made them, one collection read from a playlist."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE collections (id TEXT PRIMARY KEY, videos TEXT NOT NULL) WITHOUT ROWID")
        db.execute(
            "CREATE TABLE collection_sources (id TEXT PRIMARY KEY, kind TEXT NOT NULL, source TEXT NOT NULL)"
            " WITHOUT ROWID"
        )
        db.execute("INSERT INTO collections VALUES (?, ?)", (C, f'["{A}"]'))
        db.execute("INSERT INTO collection_sources VALUES (?, 'playlist', 'PLlaunch')", (C,))
    db.close()


async def test_a_file_from_before_revisions_keeps_the_collection_s_source(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.sqlite3"
    old_file(path)
    database = await SqliteDatabase.open(path)
    try:
        store = await SqliteCollectionStore.create(database)
        sources = await SqliteCollectionSources.create(database)
        await SqliteCollectionStore.create(database)  # a second worker opening it: nothing to add
        await SqliteCollectionSources.create(database)

        stored = (await store.get(C)).unwrap()
        assert stored == Collection(C, (A,)) and stored.revision == NO_REVISION
        assert await sources.get(C) == Success(KeptSource(PLAYLIST, NO_REVISION))  # still its source

        replaced = (await store.replace_if(C, (A, B), NO_REVISION)).unwrap()
        assert (await sources.get(C)).unwrap() != KeptSource(PLAYLIST, replaced.revision)  # a stranger's now
    finally:
        await database.close()
