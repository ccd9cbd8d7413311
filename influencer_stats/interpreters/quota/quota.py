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
    ``stretch()``, how much to stretch freshness: 1 while the share of the
    budget left is at least the share of the day left, else the ratio of the
    two (at most ``MAX_STRETCH``), so spending that runs ahead of the day slows
    down in proportion and the budget lasts until the reset. It reads the
    spending this process last saw (with a shared ledger, everyone's, as of
    this process's last call). The clock is wall time, injected.
    """

    def __init__(self, units: int, day: QuotaDay, clock: Callable[[], float]) -> None:
        if units < 1:
            raise ValueError("a quota budget needs at least one unit")
        self.units = units
        self._day = day
        self._clock = clock
        self._seen_day = ""
        self._seen_spent = 0

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
        day, seconds_left = self.now()
        if day != self._seen_day:
            return 1.0  # a new day: nothing spent yet, as far as this process knows
        budget_left = (self.units - self._seen_spent) / self.units
        day_left = self._day.fraction_left(seconds_left)
        if budget_left >= day_left:
            return 1.0
        return min(MAX_STRETCH, day_left / max(budget_left, 1 / self.units))


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
