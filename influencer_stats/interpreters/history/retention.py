"""What a history keeps: raw points for a while, then one a day, then nothing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from influencer_stats.algebras.history import DAY_S
from influencer_stats.domain.history import StatsPoint


@dataclass(frozen=True, slots=True)
class Retention:
    """Raw points for ``raw_s``, then one per UTC day until ``keep_s`` (``keep_s >= raw_s``)."""

    raw_s: float
    keep_s: float

    def kept(self, points: Sequence[StatsPoint], now: float) -> list[StatsPoint]:
        """``points`` (oldest first) as the retention keeps them at ``now``: those older than
        ``keep_s`` dropped, those older than ``raw_s`` one per day (the day's last point that
        is not a gap, else its last gap), oldest first."""
        dropped_before, raw_from = now - self.keep_s, now - self.raw_s
        by_day: dict[int, StatsPoint] = {}
        recent: list[StatsPoint] = []
        for point in points:
            if point.at < dropped_before:
                continue
            if point.at >= raw_from:
                recent.append(point)
                continue
            day = int(point.at // DAY_S)
            held = by_day.get(day)
            if held is None or not (point.gap and not held.gap):  # later wins, a gap never over data
                by_day[day] = point
        return [*by_day.values(), *recent]
