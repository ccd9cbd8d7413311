"""The quota governor: never more YouTube calls per quota day than the budget."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Final

from returns.result import Failure, Result, Success

from influencer_stats.algebras import EventLog, UpstreamMetrics
from influencer_stats.algebras.quota import QuotaLedger, Refusal
from influencer_stats.algebras.youtube import VideosListCall
from influencer_stats.domain.models import (
    QuotaExhausted,
    SharedStateUnavailable,
    StatsByVideo,
    UpstreamError,
    VideoId,
)
from influencer_stats.domain.quota import PACIFIC, YOUTUBE_DAY_S

#: How far the governor stretches freshness at most (10 s fresh → 10 min).
MAX_STRETCH: Final = 60.0
#: The pace is set again once every this many parts of the day (15 minutes of YouTube's).
PACE_WINDOWS: Final = 96
#: A window of the pace lasts at least as long as an even day takes to spend this many units.
PACE_UNITS: Final = 8
#: How far one window moves the stretch at most, either way (a quiet window halves it at most).
PACE_STEP: Final = 2.0
#: How much of the gap between the rate spent and the even rate one window closes (as a power:
#: 1 would close it at once were spending exactly inverse to the stretch; less damps the
#: overshoot of caches that answer a change a window late). perf/RESULTS.md "A day in a minute".
PACE_GAIN: Final = 0.5


class QuotaDay:
    """Which quota day an instant belongs to, and how long until the next one.

    A day of ``YOUTUBE_DAY_S`` is YouTube's: from midnight to midnight Pacific
    time (23 or 25 hours across a DST change). A shorter one (for trials: a
    budget run in the perf lab) is a fixed window counted from the Unix epoch.
    """

    def __init__(self, length_s: int) -> None:
        self.length_s = length_s

    def at(self, now: float) -> tuple[str, float]:
        """The day's key and the seconds left of it, at wall-clock time ``now``."""
        if self.length_s != YOUTUBE_DAY_S:
            index = math.floor(now / self.length_s)
            return f"w{self.length_s}-{index}", (index + 1) * self.length_s - now
        local = datetime.fromtimestamp(now, PACIFIC)
        midnight = datetime.combine(local.date() + timedelta(days=1), datetime.min.time(), PACIFIC)
        return local.date().isoformat(), midnight.timestamp() - now

    def fraction_left(self, seconds_left: float) -> float:
        """How much of the day is left, 0-1 (a 23/25-hour DST day counts as 24 hours)."""
        return min(1.0, max(0.0, seconds_left / self.length_s))


class QuotaBudget:
    """The quota governor's state: ``units`` per ``day``, and how much of it this process saw spent.

    Built once by the composition root and handed to both sides of the
    economy: the governor (the YouTube base) spends through it and notes what
    the ledger says is spent (``seen``); the per-video caches above read
    ``stretch()``, how much to stretch freshness, so the budget is spent at an
    even pace until the reset. The pace is set by the spending *rate*: once
    every ``1 / PACE_WINDOWS`` of the day, the units spent over that window are
    compared with the even rate of what is left (units left ÷ seconds left of
    the day), and the stretch is multiplied by their ratio (to the power
    ``PACE_GAIN``, between 1 and ``MAX_STRETCH``). Caches spend about in
    inverse proportion to the stretch, so spending settles on the even line of
    what is left: a burst raises the stretch for a window or two, and the rest
    of the day is then spread over what is left of it (not paid back by
    stretching hard until the day catches up); a quiet window lets it fall back
    to 1. Behind the even line (less budget left than day left) it is at least
    their ratio, which a window cannot lag: a budget of a few units, spent in
    bursts, keeps some until the reset. It reads the spending this process
    last saw (with a shared ledger, everyone's, as of this process's last
    call). The clock is wall time, injected.
    """

    def __init__(self, units: int, day: QuotaDay, clock: Callable[[], float]) -> None:
        if units < 1:
            raise ValueError("a quota budget needs at least one unit")
        self.units = units
        self._day = day
        self._clock = clock
        self._seen_day = ""
        self._seen_spent = 0
        # The pace: the stretch, and the window it was set at (day, when it began, spent then).
        self._stretch = 1.0
        self._pace_day = ""
        self._pace_at = 0.0
        self._pace_spent = 0

    def now(self) -> tuple[str, float]:
        """The current quota day's key and the seconds left of it."""
        return self._day.at(self._clock())

    def seen(self, day: str, spent: int) -> None:
        """The ledger says ``spent`` units of ``day`` are spent."""
        self._seen_day, self._seen_spent = day, spent

    def left(self) -> int:
        """The units left of today's budget as this process last saw the ledger (all of them on
        a day it has seen nothing spent)."""
        if not self._seen_day or self.now()[0] != self._seen_day:
            return self.units
        return max(0, self.units - self._seen_spent)

    def short(self) -> bool:
        """Whether spending runs ahead of the day (freshness is being stretched): background
        work that would spend units (a snapshot) waits."""
        return self.stretch() > 1.0

    def stretch(self) -> float:
        """The factor by which caches should stretch freshness now (1 = not at all)."""
        if not self._seen_day:
            return 1.0  # nothing spent yet, as far as this process knows (and no clock read)
        now = self._clock()
        day, seconds_left = self._day.at(now)
        if day != self._seen_day:
            return 1.0  # a new day: nothing spent yet, as far as this process knows
        if day != self._pace_day:  # the first look at this day: its spending so far is one window
            self._pace_day, self._stretch = day, 1.0
            # (from its start: 25 hours left of a DST day's 24 count as none gone)
            self._pace_at, self._pace_spent = now - max(0.0, self._day.length_s - seconds_left), 0
        elapsed = now - self._pace_at
        spent = self._seen_spent
        if elapsed >= self._window_s():
            self._stretch = self._paced(self._stretch, (spent - self._pace_spent) / elapsed, seconds_left)
            self._pace_at, self._pace_spent = now, spent
        budget_left = max(self.units - spent, 1) / self.units
        day_left = self._day.fraction_left(seconds_left)
        if budget_left >= day_left:
            return self._stretch
        # Behind the even line: at least its ratio (a burst a window has not measured yet).
        return min(MAX_STRETCH, max(self._stretch, day_left / budget_left))

    def _window_s(self) -> float:
        """How long a window of the pace lasts: ``1 / PACE_WINDOWS`` of the day, or longer where
        an even day spends fewer than ``PACE_UNITS`` in that (a small budget: a rate is measured
        over several units, not one or none)."""
        length_s = self._day.length_s
        return max(length_s / PACE_WINDOWS, PACE_UNITS * length_s / self.units)

    def _paced(self, stretch: float, rate: float, seconds_left: float) -> float:
        """The stretch after a window spent at ``rate`` units a second under ``stretch``, with
        ``seconds_left`` of the day: moved by the ratio of that rate to the even rate of what is
        left (to the power ``PACE_GAIN``, by ``PACE_STEP`` at most either way), at least 1 and at
        most ``MAX_STRETCH``."""
        left = self.units - self._seen_spent
        if left <= 0:
            return MAX_STRETCH
        even = left / max(seconds_left, 1.0)
        step: float = min(PACE_STEP, max(1 / PACE_STEP, (rate / even) ** PACE_GAIN))
        return min(MAX_STRETCH, max(1.0, stretch * step))


class MemoryQuotaLedger:
    """``QuotaLedger`` in this process (one worker; several would each spend a budget)."""

    def __init__(self) -> None:
        self._day = ""
        self._spent = 0

    async def take(self, day: str, budget: int, keep_s: int) -> Result[int, Refusal]:
        if day != self._day:
            self._day, self._spent = day, 0
        if self._spent >= budget:
            return Failure("spent")
        self._spent += 1
        return Success(self._spent)


class QuotaSpender:
    """Spends one unit of the day's budget per YouTube call, never over budget.

    Each call (retries included: they are calls) first takes a unit from the
    ledger for the current quota day of ``budget`` (``spend``). When the day's
    units are spent, ``spend`` answers ``QuotaExhausted`` with
    ``retry_after_s`` until the reset, and no call may be made (the caches
    above then serve what they hold). A ledger that cannot be asked is
    ``SharedStateUnavailable`` (this service's fault, not YouTube's): no call
    is made whose unit was not counted, so the budget holds even then. What
    the ledger says is spent goes to ``budget`` (``QuotaBudget.seen``), where
    the caches read how much to stretch freshness. One per process: the
    ``videos.list`` calls (``QuotaGovernor``) and the readers of playlists and
    channels spend through the same one.
    """

    def __init__(
        self, ledger: QuotaLedger, budget: QuotaBudget, log: EventLog, metrics: UpstreamMetrics
    ) -> None:
        self._ledger = ledger
        self._budget = budget
        self._log = log
        self._metrics = metrics
        self._exhausted_logged = ""

    async def spend(self) -> UpstreamError | None:
        """One unit spent (``None``: make the call), or why none was."""
        budget = self._budget
        units = budget.units
        day, seconds_left = budget.now()
        taken = await self._ledger.take(day, units, math.ceil(seconds_left) + 3600)
        match taken:
            case Success(spent):
                budget.seen(day, spent)
                self._metrics.quota(1, units - spent)
                return None
            case Failure("spent"):
                budget.seen(day, units)
                self._metrics.quota(0, 0)
                if self._exhausted_logged != day:
                    self._exhausted_logged = day
                    self._log.warning("quota.exhausted", budget=units, reset_in_s=math.ceil(seconds_left))
                return QuotaExhausted(
                    f"this service's budget of {units:,} YouTube units for today is spent; "
                    "it resets at midnight Pacific time",
                    retry_after_s=max(1, math.ceil(seconds_left)),
                )
            case Failure("recounting"):
                return SharedStateUnavailable(
                    "the shared quota count is being recounted after Redis lost it; no YouTube call was made"
                )
        return SharedStateUnavailable("the shared quota count did not answer; no YouTube call was made")

    def afford(self, units: int) -> QuotaExhausted | None:
        """``None`` when ``units`` more calls fit in what is left of today's budget (as the ledger
        last answered this process: right after a ``spend``, now), else the ``QuotaExhausted`` to
        answer instead of starting them: a read that cannot finish spends nothing more."""
        budget = self._budget
        left = budget.left()
        if units <= left:
            return None
        _, seconds_left = budget.now()
        return QuotaExhausted(
            f"reading it needs {units:,} more YouTube units and {left:,} are left of this service's "
            f"budget of {budget.units:,} for today; no more were spent on it (the budget resets at "
            "midnight Pacific time)",
            retry_after_s=max(1, math.ceil(seconds_left)),
        )


class QuotaGovernor:
    """``VideosListCall`` wrapper, last before the network: each call spends a unit first
    (``QuotaSpender``), and is not made when none was."""

    def __init__(self, inner: VideosListCall, spender: QuotaSpender) -> None:
        self._inner = inner
        self._spender = spender

    async def __call__(self, ids: Sequence[VideoId]) -> Result[StatsByVideo, UpstreamError]:
        refused = await self._spender.spend()
        if refused is not None:
            return Failure(refused)
        return await self._inner(ids)
