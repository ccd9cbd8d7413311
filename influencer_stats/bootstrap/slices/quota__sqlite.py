"""Joint ``quota__sqlite``: the day's quota counted in the SQLite database (``--quota sqlite``),
kept through restarts and shared by the workers of one host.

The ``quota`` slice's and the ``sqlite`` slice's only together (``slice.Joint``): loaded while
both are installed, removed with either. Its entry builds the quota slice's ``CountedQuota`` with
a ledger in a table of the shared database (``INFLUENCER_STATS_DB``), so a restarted process does
not spend the day's budget again (``memory`` forgets it). Not the default: each unit is synced to
disk before its call (3-5 ms here), and YouTube refuses what a forgetful count overspends anyway.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from influencer_stats.bootstrap.quota import QUOTAS, Quota
from influencer_stats.bootstrap.slices.quota import counted
from influencer_stats.bootstrap.slices.slice import Joint
from influencer_stats.bootstrap.slices.sqlite import database
from influencer_stats.bootstrap.wiring import Resources, Wiring

if TYPE_CHECKING:
    from influencer_stats.algebras.quota import QuotaLedger

JOINT = Joint(
    ("quota", "sqlite"),
    "the day's quota counted in the SQLite database (--quota sqlite), kept through restarts",
    files=(
        "influencer_stats/interpreters/quota/quota_sqlite.py",
        "tests/unit/test_quota_sqlite.py",
        "tests/integration/test_quota_sqlite_restart.py",
    ),
    modules=(
        "influencer_stats.interpreters.quota.quota_sqlite",
        "influencer_stats.bootstrap.slices.quota__sqlite",
    ),
)


@QUOTAS.add(
    "sqlite",
    "units spent today, counted in the SQLite file (INFLUENCER_STATS_DB): kept through restarts, "
    "shared by the workers of one host",
    paths=("db_path",),
    ready=("sqlite",),
    shared=True,  # one count for every worker (the memory ledger's refusal names it)
)
async def _sqlite(resources: Resources) -> Quota:
    from influencer_stats.interpreters.quota.quota_sqlite import SCHEMA

    await (await database(resources)).create(SCHEMA)  # the file and its table, at start
    return counted(resources.settings, _ledger)


async def _ledger(wiring: Wiring) -> QuotaLedger:
    from influencer_stats.interpreters.quota.quota_sqlite import SqliteQuotaLedger

    # Wall time: a row's expiry is a Unix time, its day a Pacific calendar day.
    return SqliteQuotaLedger(await database(wiring), wiring.log, time.time)
