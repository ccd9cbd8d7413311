"""Slice ``sqlite``: the SQLite database (``INFLUENCER_STATS_DB``) and the durable store on it (``--store sqlite``).

Its entry ``sqlite`` in the core's ``store`` slot is ``preferred``: the slot's default while this
slice is installed, so the default profile (``demo``) and ``youtube``, which name no store, keep
their collections in SQLite here and in the core's ``dict`` without it (``python main.py`` runs
in the skeleton). The database is one resource every SQLite builder shares (``database``: opened
on first use, closed last, its ``/readyz`` check ``sqlite``); ``wiring.SHARED_PATHS`` says its
file is that resource's, so several entries may declare ``db_path``. The history's and the
sources' SQLite entries are theirs and this slice's only together: the joints
``history__sqlite`` and ``sources__sqlite`` (``slice.Joint``), removed with either slice. The
setting ``INFLUENCER_STATS_DB`` stays core, as every setting only a slice reads does for now.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from influencer_stats.bootstrap.slices.slice import Slice
from influencer_stats.bootstrap.stores import STORES
from influencer_stats.bootstrap.wiring import SHARED_PATHS

if TYPE_CHECKING:
    from influencer_stats.algebras import CollectionStore
    from influencer_stats.bootstrap.wiring import Resources, Wiring
    from influencer_stats.interpreters.sqlite_database import SqliteDatabase

SLICE = Slice(
    "sqlite",
    "the SQLite database and the durable store on it (--store sqlite, the store's default)",
    files=(
        "influencer_stats/interpreters/sqlite_database.py",
        "influencer_stats/interpreters/collections/sqlite.py",
        "tests/unit/test_sqlite_reads.py",
        "tests/unit/test_sqlite_revisions.py",
        "tests/integration/test_sqlite_*.py",
    ),
    modules=(
        "influencer_stats.interpreters.sqlite_database",
        "influencer_stats.interpreters.collections.sqlite",
        "influencer_stats.bootstrap.slices.sqlite",
    ),
)

#: The setting naming the database's file: every SQLite entry declares it, reaching the file
#: through ``database`` (``tests/unit/test_house.py`` checks both).
SHARED_PATHS["db_path"] = "database"


async def database(resources: Resources) -> SqliteDatabase:
    """The one SQLite database (``INFLUENCER_STATS_DB``) every SQLite interpreter keeps its
    tables in, its folder created; opened on first use, closed last, checked by ``/readyz``."""
    return await resources.once("sqlite", lambda: _open(resources))


async def _open(resources: Resources) -> SqliteDatabase:
    import sqlite3
    from pathlib import Path

    from influencer_stats.bootstrap.startup import StartupError
    from influencer_stats.interpreters.sqlite_database import SqliteDatabase

    path = Path(resources.settings.db_path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise StartupError.of("db_path", path, f"cannot create folder {path.parent}", error) from None
    try:
        opened = await SqliteDatabase.open(path)
    except (OSError, sqlite3.Error) as error:
        raise StartupError.of("db_path", path, "cannot open the database", error) from None
    resources.exits.push_async_callback(opened.close)
    resources.checks["sqlite"] = opened.ping
    return opened


@STORES.add(
    "sqlite",
    "a durable file (INFLUENCER_STATS_DB), fsynced before each write is acknowledged",
    paths=("db_path",),
    ready=("sqlite",),
    preferred=True,
)
async def _sqlite(wiring: Wiring) -> CollectionStore:
    from influencer_stats.interpreters.collections.sqlite import SqliteCollectionStore

    return await SqliteCollectionStore.create(await database(wiring))
