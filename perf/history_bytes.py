"""What the stats history holds per collection once its retention has settled (issue 25), on each
interpreter: in process memory, the SQLite database, Redis.

Each interpreter is built directly with the default retention (30 raw days, 400 kept days) and
fed hourly snapshots of simulated collections (figures the size of a real one: impressions
around 10^7, one gap in about 200 hours) from a fixed start, for ``--days`` days (401 by default:
past the 400 kept days, so the history is at its steady state, about 30 * 24 raw points and 370
daily ones). Two feeds, each on fresh storage:

- ``every hour``: ``--hourly-collections`` collections get every hourly snapshot of the span
  through ``record``, as the snapshotter would (the churn: 23 of each day's 24 points deleted
  once they are 30 days old).
- ``settled``: ``--collections`` collections get, for each day the retention had already reduced
  to one point by the end, only that day's surviving point (its last that is not a gap), then
  every hour of the remaining days. A day older than the raw period is reduced to that point
  while all its points are kept, and the point is dropped once older than the kept days, so the
  end state is the same: checked here, collection by collection, against the ``every hour``
  feed, and each count against a count computed independently.

Each collection is also claimed once (the snapshotter's ``claim``), for the last hour. Then:
memory, the bytes tracemalloc saw allocated and still held (a deep size of the history as a
cross-check); SQLite, the file's size after ``PRAGMA wal_checkpoint(TRUNCATE)`` (writes use
``synchronous=OFF`` here, which changes how long a write takes, not what the file holds);
Redis, ``MEMORY USAGE … SAMPLES 0`` of each history and claim key, summed (the
``used_memory_dataset`` delta as a cross-check), on a redis-server started here (loopback,
``--save '' --appendonly no``) and stopped by its PID::

    python perf/history_bytes.py --collections 200 --out /tmp/history-bytes

Every loop is bounded by ``--days`` and the number of collections.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
import tracemalloc
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from types import ModuleType

if __package__ in (None, ""):  # `python perf/history_bytes.py`: make `perf` importable as a package
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from returns.result import Success

from influencer_stats.algebras.history import DAY_S
from influencer_stats.domain.history import StatsPoint
from influencer_stats.interpreters.history.memory import MemoryStatsHistory
from influencer_stats.interpreters.history.retention import Retention
from perf.history_feed import START, History, Plan, collection_id, expected_count, feed
from perf.procs import LabError

#: The most points a history may hold here (read back in one page): far above 30 * 24 + 400.
MAX_POINTS = 10_000
#: What the service asks for 10,000 collections (issue 25).
TARGET_COLLECTIONS = 10_000


@dataclass
class Measure:
    interpreter: str
    feed: str
    collections: int
    records: int
    seconds: float
    total_bytes: int
    measured_as: str
    counts: list[int] = field(default_factory=list)
    expected: list[int] = field(default_factory=list)
    points: dict[int, tuple[StatsPoint, ...]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def per_collection(self) -> float:
        return self.total_bytes / self.collections

    @property
    def per_point(self) -> float:
        return self.total_bytes / max(1, sum(self.counts))


async def read_back(history: History, plan: Plan, measure: Measure, keep: int) -> None:
    """Each collection's points: their count, the expected count, and the first ``keep`` collections' points."""
    for index in range(measure.collections):
        got = await history.points(collection_id(index), 0.0, float("inf"), MAX_POINTS)
        if not isinstance(got, Success):
            raise LabError(f"{measure.interpreter}: points failed: {got.failure()}")
        points = got.unwrap()
        if len(points) >= MAX_POINTS:
            raise LabError(f"{measure.interpreter}: {len(points)} points or more in one history")
        measure.counts.append(len(points))
        measure.expected.append(expected_count(plan, index))
        if index < keep:
            measure.points[index] = points


def interpreters() -> list[ModuleType]:
    """Each ``perf/history_bytes_<interpreter>.py`` here, by name: the SQLite and Redis histories'
    measures are their joints' files (gone with either slice), so this lab measures what is installed."""
    found = sorted(Path(__file__).resolve().parent.glob("history_bytes_*.py"))
    return [import_module(f"perf.{path.stem}") for path in found]


def feed_sizes(options: argparse.Namespace) -> list[tuple[str, int]]:
    sizes = [("every hour", options.hourly_collections), ("settled", options.collections)]
    return [(name, n) for name, n in sizes if n > 0]


async def measure_memory(plan: Plan, name: str, collections: int, keep: int) -> Measure:
    gc.collect()
    tracemalloc.start()
    try:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        history = MemoryStatsHistory(plan.retention, max_collections=collections + 1)
        started = time.monotonic()
        records = await feed(history, plan, collections, name == "settled")
        seconds = time.monotonic() - started
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    measure = Measure("memory", name, collections, records, seconds, held, "tracemalloc: bytes still held")
    measure.notes.append(
        f"deep size of the history (sys.getsizeof, each object once): {deep_size(history):,} B"
    )
    await read_back(history, plan, measure, keep)
    return measure


def deep_size(history: MemoryStatsHistory) -> int:
    """The history's dicts, lists, ids, points and their figures, each object once (the
    interpreter's cached small ints and bools are shared by everything, so not counted)."""
    seen: set[int] = set()
    total = 0

    def add(obj: object) -> None:
        nonlocal total
        if id(obj) in seen or obj is None or isinstance(obj, bool):
            return
        if isinstance(obj, int) and -5 <= obj <= 256:
            return
        seen.add(id(obj))
        total += sys.getsizeof(obj)

    points, claimed = history._points, history._claims._claimed
    for mapping in (points, claimed):
        add(mapping)
    for key, kept in points.items():
        add(key)
        add(kept)
        for p in kept:
            add(p)
            for value in (p.at, p.impressions, p.engagements, p.score, p.videos, p.missing):
                add(value)
    for key, slot in claimed.items():
        add(key)
        add(slot)
    return total


# --- The report ----------------------------------------------------------------------------


def check(measures: Sequence[Measure]) -> list[str]:
    """What does not hold: counts against the independent count, and each interpreter's two feeds
    ending in the same points for the collections both fed."""
    problems: list[str] = []
    for m in measures:
        wrong = [
            (i, got, want)
            for i, (got, want) in enumerate(zip(m.counts, m.expected, strict=True))
            if got != want
        ]
        if wrong:
            i, got, want = wrong[0]
            problems.append(
                f"{m.interpreter}/{m.feed}: {len(wrong)} collections hold another count than expected,"
                f" e.g. #{i}: {got} points, expected {want}"
            )
    for interpreter in sorted({m.interpreter for m in measures}):
        feeds = {m.feed: m for m in measures if m.interpreter == interpreter}
        if len(feeds) < 2:
            continue
        hourly, settled = feeds["every hour"], feeds["settled"]
        for index in sorted(hourly.points.keys() & settled.points.keys()):
            if hourly.points[index] != settled.points[index]:
                problems.append(
                    f"{interpreter}: collection #{index} ends in other points fed every hour than settled"
                )
    return problems


def table(measures: Sequence[Measure]) -> str:
    lines = [
        "| interpreter | feed | collections | records | points per collection (min–max) | bytes per collection"
        " | bytes per point | × 10,000 collections | measured as |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for m in measures:
        mean = sum(m.counts) / len(m.counts)
        lines.append(
            f"| {m.interpreter} | {m.feed} | {m.collections:,} | {m.records:,} "
            f"| {mean:,.1f} ({min(m.counts):,}–{max(m.counts):,}) | {m.per_collection:,.0f} "
            f"| {m.per_point:,.1f} | {m.per_collection * TARGET_COLLECTIONS / 2**20:,.0f} MiB | {m.measured_as} |"
        )
    return "\n".join(lines)


async def run(options: argparse.Namespace) -> int:
    plan = Plan(options.days, Retention(raw_s=options.raw_days * DAY_S, keep_s=options.keep_days * DAY_S))
    keep = min(options.hourly_collections, options.collections)  # compared between the feeds
    options.out.mkdir(parents=True, exist_ok=True)
    measures: list[Measure] = []

    def done(m: Measure) -> None:
        measures.append(m)
        print(
            f"{m.interpreter} / {m.feed}: {m.records:,} records in {m.seconds:.1f}s",
            file=sys.stderr,
            flush=True,
        )

    for name, n in feed_sizes(options):
        done(await measure_memory(plan, name, n, keep))
    for interpreter in interpreters():
        await interpreter.measure_all(plan, feed_sizes(options), keep, options.out, done)

    print(
        f"{plan.days} days of hourly snapshots from {time.strftime('%Y-%m-%d', time.gmtime(START))}, "
        f"retention {options.raw_days:g} raw days, {options.keep_days:g} kept days\n"
    )
    print(table(measures))
    print()
    for m in measures:
        for note in m.notes:
            print(f"- {m.interpreter} / {m.feed}: {note}")
    problems = check(measures)
    for problem in problems:
        print(f"- MISMATCH {problem}")
    if not problems:
        print(
            f"- every count matches the independent count; the two feeds end in the same points ({keep} collections)"
        )
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--collections", type=int, default=200, help="collections of the settled feed")
    parser.add_argument(
        "--hourly-collections", type=int, default=5, help="collections fed every hour of the span (0: none)"
    )
    parser.add_argument("--days", type=int, default=401, help="days of hourly snapshots (401: steady state)")
    parser.add_argument("--raw-days", type=float, default=30.0)
    parser.add_argument("--keep-days", type=float, default=400.0)
    parser.add_argument("--out", type=Path, default=Path("perf/out/history-bytes"))
    options = parser.parse_args()
    if options.collections < 1 or options.hourly_collections < 0 or options.days < 1:
        parser.error("--collections and --days must be at least 1, --hourly-collections at least 0")
    if not 0 < options.raw_days <= options.keep_days:
        parser.error("need 0 < --raw-days <= --keep-days")
    try:
        return asyncio.run(run(options))
    except LabError as exc:
        print(f"history_bytes: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
