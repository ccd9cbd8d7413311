"""Joint ``sources__sqlite``: the collections' sources in the SQLite database (``--sources sqlite``).

The ``sources`` slice's and the ``sqlite`` slice's only together (``slice.Joint``): loaded while
both are installed, removed with either. Its entry keeps each collection's source and claims in
tables of the shared database; the sources' own slot then follows a SQLite store by default
(``same_as="store"``).
"""

from __future__ import annotations

from influencer_stats.algebras.sources import CollectionSources
from influencer_stats.bootstrap.slices.slice import Joint
from influencer_stats.bootstrap.slices.sources import SOURCES
from influencer_stats.bootstrap.slices.sqlite import database
from influencer_stats.bootstrap.wiring import Wiring

JOINT = Joint(
    ("sources", "sqlite"),
    "the collections' sources in the SQLite database (--sources sqlite)",
    files=(
        "influencer_stats/interpreters/sources/sqlite.py",
        "tests/unit/test_sources_sqlite_revisions.py",
        "tests/integration/test_sources_sqlite.py",
    ),
    modules=(
        "influencer_stats.interpreters.sources.sqlite",
        "influencer_stats.bootstrap.slices.sources__sqlite",
    ),
)


@SOURCES.add(
    "sqlite",
    "a table in the SQLite database (INFLUENCER_STATS_DB), durable",
    paths=("db_path",),
    ready=("sqlite",),
)
async def _sqlite(wiring: Wiring) -> CollectionSources:
    from influencer_stats.interpreters.sources.sqlite import SqliteCollectionSources

    return await SqliteCollectionSources.create(await database(wiring))
