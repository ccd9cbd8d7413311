"""The report of a day in a minute (:mod:`perf.day`): what a day is, what it did, and the optimum beside it."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from influencer_stats.domain.quota import YOUTUBE_DAY_S
from influencer_stats.interpreters.youtube.youtube_api import MAX_IDS_PER_CALL

#: The collections whose answers the report shows apart, by popularity rank (0 the first).
RANKS = (0, 4, 19, 99, 299)


@dataclass(frozen=True)
class Day:
    """What a day is made of."""

    collections: int = 300
    videos: int = 50
    distinct: int = 3_000
    rate: float = 1.0
    budget: int = 10_000
    day_s: int = YOUTUBE_DAY_S
    latency_ms: float = 50.0
    seed: int = 33
    stretch: float = 0.0  # an experiment: freshness stretched by this constant (0: the governor's)
    pace: float = 0.0  # an experiment: stretched by (day left / budget left) ** pace (0: the governor's; 1 its former rule)


@dataclass
class Report:
    """What the day did, beside the optimum."""

    day: Day
    distinct: int  # ids in at least one collection
    ttl_s: float
    units: int  # calls made within the day
    ids_called: int
    answers: list[float]  # the age each served answer was (its oldest video's), in order
    video_ages: Counter[int]  # each video served, by its age in whole seconds
    refused: list[tuple[float, int]]  # (when, distinct ids asked by then) of each quota refusal
    failed: int  # answers failed otherwise
    hourly: list[tuple[int, float]]  # (units spent by the end of each 24th of the day, stretch then)
    events: Counter[str]
    saved: Counter[str]
    snapshots: bool
    by_rank: dict[int, list[float]] = field(
        default_factory=dict
    )  # each answer's age, by collection rank (0 first)

    @property
    def refreshes_per_video(self) -> float:
        """What the optimum refreshes each video a day: every unit a full call, spread evenly."""
        return self.day.budget * MAX_IDS_PER_CALL / self.distinct

    @property
    def optimum_s(self) -> float:
        """The oldest a video gets under the optimum (``day x D / (50 B)``); ``T / 2`` on average."""
        return self.day.day_s / self.refreshes_per_video

    @property
    def full_freshness_units(self) -> int:
        """The units a day that keep every video within the video TTL (a full call each TTL)."""
        return math.ceil(self.distinct / MAX_IDS_PER_CALL) * math.ceil(self.day.day_s / self.ttl_s)

    def refused_while_optimum_had_units(self) -> int:
        """Refusals at a time when the optimum could still hold every video asked so far."""
        return sum(1 for _, seen in self.refused if math.ceil(seen / MAX_IDS_PER_CALL) <= self.day.budget)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values`` by nearest rank; 0 when there are none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))]


def counted_percentile(counts: Counter[int], q: float) -> float:
    """The ``q``-th percentile (0-100) of values counted in ``counts``, by nearest rank; 0 when empty."""
    total = counts.total()
    rank, seen = max(1, math.ceil(q / 100 * total)), 0
    for value in sorted(counts):
        seen += counts[value]
        if seen >= rank:
            return float(value)
    return 0.0


def render(report: Report, command: str) -> str:
    """The report as markdown."""
    day, answers, opt = report.day, report.answers, report.optimum_s
    served = {
        "p50": percentile(answers, 50),
        "p99": percentile(answers, 99),
        "max": max(answers, default=0.0),
    }
    ages = report.video_ages
    videos = {
        "p50": counted_percentile(ages, 50),
        "p99": counted_percentile(ages, 99),
        "max": max(ages, default=0),
    }
    best = {"p50": opt / 2, "p99": 0.99 * opt, "max": opt}
    per_call = report.ids_called / report.units if report.units else 0.0
    lines = [
        f"`{command}`",
        "",
        f"- day: {day.day_s:,} s, {day.collections:,} collections of {day.videos} ids over "
        f"{report.distinct:,} distinct videos, {day.rate:g} requests/s (Zipf), budget {day.budget:,} units; "
        f"snapshots: {'yes' if report.snapshots else 'no (history not installed)'}"
        + (f"; freshness stretched {day.stretch:g}× all day (not the governor's)" if day.stretch else "")
        + (
            f"; freshness stretched (day left / budget left)^{day.pace:g} (not the governor's)"
            if day.pace
            else ""
        ),
        f"- full freshness (a full call per {report.ttl_s:g} s TTL) needs {report.full_freshness_units:,} units: "
        f"the budget is {'below' if day.budget < report.full_freshness_units else 'not below'} it",
        f"- units spent: {report.units:,} of {day.budget:,}; {report.ids_called:,} ids called, "
        f"{per_call:.1f} ids a call; {report.ids_called / report.distinct:.1f} refreshes a video "
        f"(optimum {report.refreshes_per_video:.1f})",
        f"- answers: {len(answers):,} served, {len(report.refused):,} refused for quota "
        f"({report.refused_while_optimum_had_units():,} while the optimum had units), {report.failed:,} failed otherwise",
        "",
        "| age served | an answer (its oldest video) | × optimum | a video | × optimum | optimum |",
        "|---|---:|---:|---:|---:|---:|",
        *(
            f"| {k} | {served[k]:,.0f} s | {served[k] / best[k]:.2f}× | {videos[k]:,.0f} s | "
            f"{videos[k] / best[k]:.2f}× | {best[k]:,.0f} s |"
            for k in ("p50", "p99", "max")
        ),
        "",
        "- units spent by each 24th of the day (even: "
        + f"{day.budget / 24:,.0f} each), and the stretch then: "
        + ", ".join(f"{u:,} ({s:.1f}×)" for u, s in report.hourly),
        "- answer age p50 / p99 by collection popularity rank: "
        + ", ".join(
            f"#{rank + 1} {percentile(report.by_rank[rank], 50):,.0f} s / {percentile(report.by_rank[rank], 99):,.0f} s"
            for rank in RANKS
            if rank in report.by_rank
        ),
        "- video cache events: " + ", ".join(f"{k} {v:,}" for k, v in sorted(report.events.items())),
        "- calls saved: " + (", ".join(f"{k} {v:,}" for k, v in sorted(report.saved.items())) or "none"),
    ]
    return "\n".join(lines) + "\n"
