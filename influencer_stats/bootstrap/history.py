"""The ``history`` slot: where snapshots of each collection's stats are kept (their retention:
``INFLUENCER_STATS_HISTORY_RAW_DAYS`` and ``_KEEP_DAYS``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from influencer_stats.algebras.history import DAY_S, StatsHistory
from influencer_stats.bootstrap.registry import Registry
from influencer_stats.bootstrap.wiring import Wiring
from influencer_stats.interpreters.history.retention import Retention

HistoryBuilder = Callable[[Wiring], Awaitable[StatsHistory]]
HISTORIES: Registry[HistoryBuilder] = Registry("history")
#: The most collections the in-process history keeps points of: about 237 KB each at steady
#: state (perf/RESULTS.md, "Stats history: bytes per collection"), so 2.3 GiB at most.
MEMORY_COLLECTIONS = 10_000


@HISTORIES.add(
    "memory",
    "in process memory, one process, gone at exit",
    per_process=("stats history", "--history sqlite or redis"),
)
async def _memory(wiring: Wiring) -> StatsHistory:
    from influencer_stats.interpreters.history.memory import MemoryStatsHistory

    return MemoryStatsHistory(retention(wiring), MEMORY_COLLECTIONS)


@HISTORIES.add(
    "sqlite",
    "a table in the SQLite database (INFLUENCER_STATS_DB), durable",
    paths=("db_path",),
    ready=("sqlite",),
)
async def _sqlite(wiring: Wiring) -> StatsHistory:
    from influencer_stats.interpreters.history.sqlite import SqliteStatsHistory

    return await SqliteStatsHistory.create(await wiring.sqlite(), retention(wiring))


@HISTORIES.add("redis", "shared by every worker and host (REDIS_URL)", ready=("redis",), needs=("redis",))
async def _redis(wiring: Wiring) -> StatsHistory:
    from influencer_stats.interpreters.history.redis import RedisStatsHistory

    return RedisStatsHistory(await wiring.redis(), wiring.redis_keys(), retention(wiring))


def retention(wiring: Wiring) -> Retention:
    """The retention the settings ask for."""
    settings = wiring.settings
    return Retention(raw_s=settings.history_raw_days * DAY_S, keep_s=settings.history_keep_days * DAY_S)
