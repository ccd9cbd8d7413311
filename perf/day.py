"""A day in a minute (issue 33, item 2): a quota day of traffic on a clock that jumps.

The real parts, built from their interpreters the way the composition root builds them, on one
clock the lab owns: the quota governor (``QuotaBudget``, ``QuotaSpender`` and ``QuotaGovernor``
over a memory ledger, as the ``memory`` quota choice builds them), the YouTube base
(``YouTubeVideoStatsSource`` and its ``CallGate``) over a ``videos.list`` double that answers
after ``--latency-ms``, the video wrappers of the ``youtube`` profile (``batch``, ``breaker``:
folded from their registry, as the root does), the per-video cache (the ``video_cache`` slice's
``cached``: entries, stale queue, refresh-ahead, stale refresher), the use case (``GetStats``) and,
while the ``history`` slice is installed, its snapshotter (``perf/day_snapshots.py``). Not built:
the stats cache (per collection, it adds at most its TTL and stale window to an answer's age and
spends no unit), the HTTP edge. Settings are the ``youtube`` profile's, with the budget and the day.

Nothing sleeps: the event loop's clock jumps to the next timer whenever nothing is ready
(``VirtualLoop``), so a day of ``--rate`` requests a second runs in seconds. ``--collections`` N
collections of ``--videos`` M ids drawn from ``--distinct`` ids, asked with Zipf popularity
(rank ``r`` weighs ``1/r``) at Poisson arrivals, seeded by ``--seed``, for one quota day of
``--day-s`` seconds with a budget of ``--budget`` units::

    python perf/day.py --collections 300 --videos 50 --distinct 3000 --rate 1 --budget 10000

It reports the units spent, the age of what each answer served (its oldest video's, 0 when all
were fetched for it) beside the best any scheduler could do with the budget (every unit a full
call of 50 ids, spread evenly: ``B x 50 / D`` refreshes of each of ``D`` distinct videos a day, so
a video is at most ``T = day x D / (50 B)`` old and ``T / 2`` on average), and the answers refused
for the quota, counting those refused while that optimum still had units to load every video
asked so far. Every loop is bounded by the day's arrivals.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import selectors
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import datetime
from importlib import import_module
from pathlib import Path
from typing import Final

if __package__ in (None, ""):  # `python perf/day.py`: make `perf` importable as a package
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from returns.result import Failure, Result, Success

from influencer_stats.algebras import VideoStatsSource
from influencer_stats.bootstrap.quota import Quota
from influencer_stats.bootstrap.root import fold
from influencer_stats.bootstrap.slices.quota import CountedQuota, LedgerBuilder
from influencer_stats.bootstrap.slices.video_cache import cached
from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.bootstrap.videos import VIDEO_WRAPPERS, ids_per_call
from influencer_stats.bootstrap.wiring import Resources, Wiring
from influencer_stats.domain.models import (
    CollectionId,
    QuotaExhausted,
    StatsByVideo,
    UpstreamError,
    VideoId,
)
from influencer_stats.domain.quota import PACIFIC, YOUTUBE_DAY_S
from influencer_stats.interpreters.collections.memory_dict import DictCollectionStore
from influencer_stats.interpreters.logging.silent import SilentEventLog
from influencer_stats.interpreters.metrics.noop import NoMetrics
from influencer_stats.interpreters.quota.quota import MAX_STRETCH, MemoryQuotaLedger, QuotaBudget, QuotaDay
from influencer_stats.interpreters.video_cache.stale_queue import MemoryStaleQueue
from influencer_stats.interpreters.video_cache.video_entries import MemoryVideoEntries
from influencer_stats.interpreters.videos.synthetic import synthetic_stats, synthetic_video_id
from influencer_stats.interpreters.youtube.call_gate import CallGate
from influencer_stats.interpreters.youtube.youtube_source import UpstreamPolicy, YouTubeVideoStatsSource
from influencer_stats.logic.service import GetStats
from perf.day_report import Day, Report, render
from perf.profiles import budgeted, service_settings, valid_choice

#: The day starts at a Pacific midnight without a DST change (a quota day of 24 hours).
START: Final = datetime(2026, 1, 15, tzinfo=PACIFIC).timestamp()
PROFILE: Final = "youtube"


class _JumpingSelector(selectors.SelectSelector):
    """A selector that never waits: with nothing ready, the clock jumps by the timeout instead."""

    def __init__(self, clock: list[float]) -> None:
        super().__init__()
        self._clock = clock

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = super().select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:
            raise RuntimeError("the simulated day is stuck: nothing ready and no timer set")
        self._clock[0] += timeout
        return ready


class VirtualLoop(asyncio.SelectorEventLoop):
    """An event loop on a clock of its own (from 0) that jumps to the next timer when idle."""

    def __init__(self) -> None:
        self._now = [0.0]
        super().__init__(_JumpingSelector(self._now))

    def time(self) -> float:
        return self._now[0]


class CountingMetrics(NoMetrics):
    """``NoMetrics`` that counts the video cache's events and the calls each layer saved."""

    def __init__(self) -> None:
        self.events: Counter[str] = Counter()
        self.saved: Counter[str] = Counter()

    def video_cache_event(self, kind: str, videos: int) -> None:
        self.events[kind] += videos

    def calls_saved(self, by: str, calls: int) -> None:
        self.saved[by] += calls


class _Paced(CountedQuota):
    """The budget counted as the ``memory`` choice counts it, freshness stretched otherwise than by
    the governor's ``QuotaBudget.stretch`` (an experiment: what another pace would buy): by the
    constant ``fixed``, or by ``(d / b) ** exponent`` (the governor's former rule is exponent 1:
    *d* the share of the day left, *b* of the budget left), at most ``MAX_STRETCH``."""

    __slots__ = ("_day", "_exponent", "_fixed", "_units")

    def __init__(self, budget: QuotaBudget, ledger: LedgerBuilder, day: Day) -> None:
        super().__init__(budget, ledger)
        self._units, self._day = budget, QuotaDay(day.day_s)
        self._fixed, self._exponent = day.stretch, day.pace

    def stretch(self) -> float:
        if self._fixed:
            return self._fixed
        budget = self._units
        left = max(budget.left(), 1) / budget.units
        day_left = self._day.fraction_left(budget.now()[1])
        return 1.0 if left >= day_left else min(MAX_STRETCH, (day_left / left) ** self._exponent)


@dataclass
class Upstream:
    """The ``videos.list`` double: answers every id after ``latency_s``; records each call."""

    wall: Callable[[], float]
    latency_s: float
    calls: list[tuple[float, int]] = field(default_factory=list)  # (wall time, ids)

    async def __call__(self, ids: Sequence[VideoId]) -> Result[StatsByVideo, UpstreamError]:
        self.calls.append((self.wall(), len(ids)))
        await asyncio.sleep(self.latency_s)
        return Success({i: synthetic_stats(i) for i in ids})


def _settings_env(day: Day) -> dict[str, str]:
    env = {
        "YOUTUBE_API_KEY": "perf",
        "INFLUENCER_STATS_QUOTA_PER_DAY": str(day.budget),
        "INFLUENCER_STATS_QUOTA_DAY": str(day.day_s),
    }
    if "history" in SLOTS:
        env["INFLUENCER_STATS_HISTORY"] = "memory"
    return env


def _collections(day: Day, rng: random.Random) -> list[tuple[VideoId, ...]]:
    pool = [synthetic_video_id(n) for n in range(day.distinct)]
    return [tuple(rng.sample(pool, min(day.videos, day.distinct))) for _ in range(day.collections)]


async def _stack(
    wiring: Wiring, store: DictCollectionStore, upstream: Upstream, loop: asyncio.AbstractEventLoop
) -> tuple[GetStats, MemoryVideoEntries]:
    """The use case over the video stack of the settings, built as ``root`` and ``bootstrap.videos`` do."""
    settings = wiring.settings
    policy = UpstreamPolicy(
        ids_per_call=ids_per_call(settings) or 1,
        call_timeout_s=settings.upstream_call_timeout_s,
        retries=settings.upstream_retries,
    )
    gate = CallGate(
        settings.upstream_connections,
        per_flow=settings.upstream_concurrency,
        max_waiting=settings.upstream_queue,
    )
    call = await wiring.quota.governed(wiring, upstream)
    base: VideoStatsSource = YouTubeVideoStatsSource(
        call, policy, gate, wiring.log, wiring.metrics, clock=loop.time
    )
    wrapped = await fold(wiring, base, settings.choices["video_wrappers"], VIDEO_WRAPPERS)
    entries = MemoryVideoEntries(settings.video_cache_max_entries)
    stale = MemoryStaleQueue(ids_per_call(settings))
    source = cached(wiring, wrapped, entries, stale, loop.time, shared=False, misses=None)
    return GetStats(store, source, wiring.log), entries


async def _run(day: Day) -> Report:
    loop = asyncio.get_running_loop()
    rng = random.Random(day.seed)
    settings = service_settings(_settings_env(day), PROFILE)
    wall_start = START if day.day_s == YOUTUBE_DAY_S else math.ceil(START / day.day_s) * day.day_s

    def wall() -> float:
        return wall_start + loop.time()

    metrics, log = CountingMetrics(), SilentEventLog()
    budget = QuotaBudget(day.budget, QuotaDay(day.day_s), wall)

    async def ledger(_: Wiring) -> MemoryQuotaLedger:
        return MemoryQuotaLedger()

    quota: Quota = _Paced(budget, ledger, day) if day.stretch or day.pace else CountedQuota(budget, ledger)
    upstream = Upstream(wall, day.latency_ms / 1000)
    async with AsyncExitStack() as exits:
        resources = Resources(settings, exits, {}, sys.stdout.buffer)
        resources.count_with(quota)
        wiring = resources.observed(metrics).wired(log)
        store = DictCollectionStore()
        collections = _collections(day, rng)
        for n, videos in enumerate(collections):
            await store.save(CollectionId(f"c{n}"), videos)
        stats, entries = await _stack(wiring, store, upstream, loop)
        snapshots = None
        if "history" in SLOTS:
            module = import_module("perf.day_snapshots")
            run = await module.snapshots(wiring, store, stats, clock=wall, short=quota.short)
            snapshots = None if run is None else asyncio.ensure_future(run)
        report = Report(
            day, len({v for c in collections for v in c}), settings.video_ttl_s, 0, 0, [], Counter(), [], 0, [],
            metrics.events, metrics.saved, snapshots is not None,
        )  # fmt: skip
        await _traffic(day, rng, collections, (stats, entries), report, quota)
        if snapshots is not None:
            snapshots.cancel()
        # The calls of the quota day (the clock's last jump may reach the next one's first instant).
        today = QuotaDay(day.day_s).at(wall_start)[0]
        within = [(t - wall_start, n) for t, n in upstream.calls if QuotaDay(day.day_s).at(t)[0] == today]
        report.units, report.ids_called = len(within), sum(n for _, n in within)
        report.hourly = [(sum(1 for t, _ in within if t < h), s) for h, s in report.hourly]
    return report


async def _traffic(
    day: Day,
    rng: random.Random,
    collections: list[tuple[VideoId, ...]],
    built: tuple[GetStats, MemoryVideoEntries],
    report: Report,
    quota: Quota,
) -> None:
    """Requests at Poisson arrivals until the day ends (at most twice the expected count)."""
    loop = asyncio.get_running_loop()
    stats, entries = built
    weights = [1 / (rank + 1) for rank in range(len(collections))]
    seen: set[VideoId] = set()
    pending: set[asyncio.Task[None]] = set()
    step = day.day_s / 24

    async def ask(n: int) -> None:
        seen.update(collections[n])
        answer = await stats.stats(CollectionId(f"c{n}"))
        match answer:
            case Success(served):
                now = loop.time()
                report.answers.append(served.cache.age_s if served.cache is not None else 0.0)
                held = await entries.get_many(collections[n])  # each video's age as served
                report.video_ages.update(round(now - e.stored_at) for e in held.values())
                report.by_rank.setdefault(n, []).append(report.answers[-1])
            case Failure(QuotaExhausted()):
                report.refused.append((loop.time(), len(seen)))
            case _:
                report.failed += 1

    at, next_hour = 0.0, step
    for _ in range(2 * math.ceil(day.rate * day.day_s) + 1):
        at += rng.expovariate(day.rate)
        if at >= day.day_s:
            break
        while next_hour <= at:
            await asyncio.sleep(next_hour - loop.time())
            report.hourly.append((round(next_hour), quota.stretch()))
            next_hour += step
        await asyncio.sleep(at - loop.time())
        (n,) = rng.choices(range(len(collections)), weights)
        task = asyncio.ensure_future(ask(n))
        pending.add(task)
        task.add_done_callback(pending.discard)
    while next_hour <= day.day_s:
        await asyncio.sleep(next_hour - loop.time())
        report.hourly.append((round(next_hour), quota.stretch()))
        next_hour += step
    if pending:
        await asyncio.wait(pending, timeout=60)


def simulate(day: Day) -> Report:
    """One simulated day, in seconds."""
    with asyncio.Runner(loop_factory=VirtualLoop) as runner:
        return runner.run(_run(day))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="perf/day.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    defaults = Day()
    parser.add_argument("--collections", type=int, default=defaults.collections)
    parser.add_argument("--videos", type=int, default=defaults.videos, help="ids a collection")
    parser.add_argument(
        "--distinct", type=int, default=defaults.distinct, help="ids the collections draw from"
    )
    parser.add_argument("--rate", type=float, default=defaults.rate, help="requests a second")
    parser.add_argument("--budget", type=int, default=defaults.budget, help="units a day")
    parser.add_argument("--day-s", type=int, default=defaults.day_s, help="the quota day's length")
    parser.add_argument(
        "--latency-ms", type=float, default=defaults.latency_ms, help="each videos.list call's"
    )
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument(
        "--stretch",
        type=float,
        default=defaults.stretch,
        help="an experiment: freshness stretched by this constant all day (0: the governor's own)",
    )
    parser.add_argument(
        "--pace",
        type=float,
        default=defaults.pace,
        help="an experiment: freshness stretched by (day left / budget left) ** PACE (0: the governor's; 1: its former rule)",
    )
    args = parser.parse_args(argv)
    if not (budgeted(PROFILE) and valid_choice("video_cache", "memory")):
        print("perf/day.py needs the quota and video_cache slices installed", file=sys.stderr)
        return 2
    day = Day(
        args.collections,
        args.videos,
        args.distinct,
        args.rate,
        args.budget,
        args.day_s,
        args.latency_ms,
        args.seed,
        args.stretch,
        args.pace,
    )
    command = "python perf/day.py " + " ".join(sys.argv[1:] if argv is None else argv)
    print(render(simulate(day), command.strip()), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
