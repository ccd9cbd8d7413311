"""Joint ``history__sqlite``: the stats history in the SQLite database (``--history sqlite``).

The ``history`` slice's and the ``sqlite`` slice's only together (``slice.Joint``): loaded while
both are installed, removed with either. Its entry keeps the snapshots in a table of the shared
database; the history's own slot then follows a SQLite store by default (``same_as="store"``).
"""

from __future__ import annotations

from influencer_stats.algebras.history import StatsHistory
from influencer_stats.bootstrap.slices.history import HISTORIES, retention
from influencer_stats.bootstrap.slices.slice import Joint
from influencer_stats.bootstrap.slices.sqlite import database
from influencer_stats.bootstrap.wiring import Wiring

JOINT = Joint(
    ("history", "sqlite"),
    "the stats history in the SQLite database (--history sqlite), the labs of its load and size",
    files=(
        "influencer_stats/interpreters/history/sqlite.py",
        "perf/history_seed.py",
        "perf/history_load.py",
        "perf/history_bytes_sqlite.py",
        "tests/integration/test_history_load.py",
        "tests/integration/test_history_sqlite.py",
    ),
    modules=(
        "influencer_stats.interpreters.history.sqlite",
        "influencer_stats.bootstrap.slices.history__sqlite",
        "perf.history_seed",
        "perf.history_load",
        "perf.history_bytes_sqlite",
    ),
)


@HISTORIES.add(
    "sqlite",
    "a table in the SQLite database (INFLUENCER_STATS_DB), durable",
    paths=("db_path",),
    ready=("sqlite",),
)
async def _sqlite(wiring: Wiring) -> StatsHistory:
    from influencer_stats.interpreters.history.sqlite import SqliteStatsHistory

    return await SqliteStatsHistory.create(await database(wiring), retention(wiring))
