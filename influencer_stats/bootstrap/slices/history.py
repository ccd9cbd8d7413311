"""Slice ``history``: snapshots of each collection's stats over time (``--history memory|sqlite|redis``).

Its own slot ``history`` (by default where the collections are; retention:
``INFLUENCER_STATS_HISTORY_RAW_DAYS`` and ``_KEEP_DAYS``), and its part of the edge: the routes
``/history``, ``/history.svg`` and ``/growth`` (``http/history_routes.py``), the snapshotter
it starts (``INFLUENCER_STATS_SNAPSHOT_INTERVAL``), and what a DELETE forgets. Without this slice
the service has none of these routes, and starts no snapshotter.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from influencer_stats.algebras import CollectionStatsQuery, CollectionStore
from influencer_stats.algebras.history import DAY_S, StatsHistory
from influencer_stats.bootstrap.parts import PARTS, Built, Part, quota_short
from influencer_stats.bootstrap.registry import Registry, Slot
from influencer_stats.bootstrap.slices.slice import INTERVAL_CLAIMS, Slice
from influencer_stats.bootstrap.wiring import Wiring
from influencer_stats.http.history_routes import HISTORY_ROUTES, HistoryPart
from influencer_stats.interpreters.history.retention import Retention

HistoryBuilder = Callable[[Wiring], Awaitable[StatsHistory]]
HISTORIES: Registry[HistoryBuilder] = Registry("history")
SLICE = Slice(
    "history",
    "snapshots of each collection's stats, and the /history, /history.svg and /growth routes",
    files=(
        "influencer_stats/algebras/history.py",
        "influencer_stats/domain/history.py",
        "influencer_stats/interpreters/history",
        "influencer_stats/logic/snapshots.py",
        "influencer_stats/http/history_*.py",
        "influencer_stats/http/openapi_history.py",
        "tests/contract/test_stats_history.py",
        "tests/integration/test_history*.py",  # test_history_redis.py: the joint with redis's too
        "tests/unit/test_history_memory.py",
        "tests/unit/test_http_api_history.py",
        "tests/unit/test_snapshots.py",
        # The lab of each history's size (its SQLite and Redis measures: their joints' files).
        "perf/history_bytes.py",
        "perf/history_feed.py",
        "tests/integration/test_perf_history_bytes.py",
        # Its snapshotter in the day in a minute (perf/day.py imports it while this slice is installed).
        "perf/day_snapshots.py",
    ),
    modules=(
        "influencer_stats.algebras.history",
        "influencer_stats.domain.history",
        "influencer_stats.interpreters.history",
        "influencer_stats.logic.snapshots",
        "influencer_stats.http.history_chart",
        "influencer_stats.http.history_query",
        "influencer_stats.http.history_routes",
        "influencer_stats.http.openapi_history",
        "influencer_stats.bootstrap.slices.history",
        "perf.history_bytes",
        "perf.history_feed",
    ),
    shared=INTERVAL_CLAIMS,
    slots=(
        Slot(
            "history",
            "where snapshots of the stats are kept (by default where the collections are)",
            HISTORIES,
            default="memory",
            same_as="store",
        ),
    ),
)

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


def retention(wiring: Wiring) -> Retention:
    """The retention the settings ask for."""
    settings = wiring.settings
    return Retention(raw_s=settings.history_raw_days * DAY_S, keep_s=settings.history_keep_days * DAY_S)


async def build_history(wiring: Wiring) -> StatsHistory:
    return await HISTORIES[wiring.settings.choices.one("history")].build(wiring)


def start_snapshots(
    wiring: Wiring, store: CollectionStore, stats: CollectionStatsQuery, history: StatsHistory
) -> None:
    """Record every collection's stats in ``history`` each ``snapshot_interval_s``, when set."""
    from influencer_stats.logic.snapshots import Snapshotter

    interval_s = wiring.settings.snapshot_interval_s
    if interval_s == 0:
        return
    snapshotter = Snapshotter(
        store,
        stats,
        history,
        wiring.log,
        interval_s=interval_s,
        clock=time.time,  # wall time: hosts agree on an interval's start
        short=quota_short(wiring),
    )
    wiring.background(snapshotter.run(), "stats-history:snapshots")


async def _part(wiring: Wiring, store: CollectionStore, stats: CollectionStatsQuery) -> Built:
    """The history the settings choose, its snapshotter started; its routes' part."""
    history = await build_history(wiring)
    start_snapshots(wiring, store, stats, history)
    part = HistoryPart(store, history, wiring.log, wiring.settings.history_query_timeout_s)
    return Built(part, history.forget)


PARTS.append(Part(HISTORY_ROUTES, _part))
