"""The stats history's part of the day in a minute (:mod:`perf.day`): its snapshotter, on the lab's clock.

The ``history`` slice's file: :mod:`perf.day` imports it only while the slice is installed (its
``history`` slot registered), so without it the day runs with no snapshots.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from influencer_stats.algebras import CollectionStatsQuery, CollectionStore
from influencer_stats.bootstrap.slices.history import build_history
from influencer_stats.bootstrap.wiring import Wiring
from influencer_stats.logic.snapshots import Snapshotter


async def snapshots(
    wiring: Wiring,
    store: CollectionStore,
    stats: CollectionStatsQuery,
    *,
    clock: Callable[[], float],
    short: Callable[[], bool],
) -> Awaitable[None] | None:
    """The snapshotter the history slice's part starts (``start_snapshots``), on ``clock`` (the
    lab's wall time) instead of ``time.time``: its ``run``, or None when the settings take none."""
    interval_s = wiring.settings.snapshot_interval_s
    if interval_s == 0:
        return None
    history = await build_history(wiring)
    snapshotter = Snapshotter(
        store, stats, history, wiring.log, interval_s=interval_s, clock=clock, short=short
    )
    return snapshotter.run()
