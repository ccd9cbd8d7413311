"""The quota governor and its day on an injected wall clock: no sleeps."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime

import pytest
from returns.result import Failure, Result, Success

from influencer_stats.algebras.quota import Refusal
from influencer_stats.domain.models import (
    QuotaExhausted,
    SharedStateUnavailable,
    StatsByVideo,
    UpstreamError,
    VideoId,
)
from influencer_stats.domain.quota import PACIFIC, YOUTUBE_DAY_S
from influencer_stats.interpreters.quota.quota import (
    MAX_STRETCH,
    MemoryQuotaLedger,
    QuotaBudget,
    QuotaDay,
    QuotaGovernor,
    QuotaSpender,
)
from influencer_stats.interpreters.videos.synthetic import synthetic_stats
from influencer_stats.testing.clock import ManualClock as Clock
from influencer_stats.testing.event_log import CapturingEventLog
from tests.support import RecordingMetrics

A = VideoId("aaaaaaaaaaa")
#: 2026-12-03 10:00 Pacific (18:00 UTC): 14 hours before the reset.
TEN_AM = datetime(2026, 12, 3, 10, tzinfo=PACIFIC).timestamp()


class Call:
    """A videos.list call that counts itself."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, ids: Sequence[VideoId]) -> Result[StatsByVideo, UpstreamError]:
        self.calls += 1
        await asyncio.sleep(0)  # a real call suspends: let concurrent callers interleave
        return Success({i: synthetic_stats(i) for i in ids})


class DownLedger:
    def __init__(self, refusal: Refusal = "unreachable") -> None:
        self.refusal = refusal

    async def take(self, day: str, budget: int, keep_s: int) -> Result[int, Refusal]:
        return Failure(self.refusal)


def governor(
    call: Call, clock: Clock, budget: int | QuotaBudget, metrics: RecordingMetrics | None = None
) -> QuotaGovernor:
    if isinstance(budget, int):
        budget = QuotaBudget(budget, QuotaDay(YOUTUBE_DAY_S), clock)
    spender = QuotaSpender(MemoryQuotaLedger(), budget, CapturingEventLog(), metrics or RecordingMetrics())
    return QuotaGovernor(call, spender)


async def test_the_budget_is_never_exceeded_and_the_refusal_says_when_it_resets() -> None:
    call, clock, metrics = Call(), Clock(TEN_AM), RecordingMetrics()
    governed = governor(call, clock, budget=3, metrics=metrics)

    answers = [await governed([A]) for _ in range(5)]

    assert call.calls == 3
    assert all(isinstance(a, Success) for a in answers[:3])
    refused = answers[3].failure()
    assert isinstance(refused, QuotaExhausted)
    assert refused.retry_after_s == 14 * 3600
    assert answers[4] == answers[3]
    assert (metrics.quota_spent, metrics.quota_left) == (3, 0)


async def test_concurrent_callers_never_spend_more_than_the_budget_together() -> None:
    call, clock = Call(), Clock(TEN_AM)
    governed = governor(call, clock, budget=10)

    answers = await asyncio.gather(*(governed([A]) for _ in range(100)))

    assert call.calls == 10
    assert sum(isinstance(a, Success) for a in answers) == 10


async def test_the_budget_comes_back_at_midnight_pacific() -> None:
    call, clock = Call(), Clock(TEN_AM)
    governed = governor(call, clock, budget=1)
    await governed([A])
    clock.now += 14 * 3600 - 1
    refused = await governed([A])

    clock.now += 1  # midnight, Pacific
    allowed = await governed([A])

    assert isinstance(refused.failure(), QuotaExhausted)
    assert isinstance(allowed, Success)
    assert call.calls == 2


@pytest.mark.parametrize(
    ("local", "key", "hours_left"),
    [
        (datetime(2026, 12, 3, 0, 0, tzinfo=PACIFIC), "2026-12-03", 24),
        (datetime(2026, 12, 3, 23, 0, tzinfo=PACIFIC), "2026-12-03", 1),
        (datetime(2026, 3, 8, 0, 0, tzinfo=PACIFIC), "2026-03-08", 23),  # spring forward
        (datetime(2026, 11, 1, 0, 0, tzinfo=PACIFIC), "2026-11-01", 25),  # fall back
    ],
)
def test_a_youtube_quota_day_runs_from_midnight_to_midnight_pacific(
    local: datetime, key: str, hours_left: int
) -> None:
    assert QuotaDay(YOUTUBE_DAY_S).at(local.timestamp()) == (key, hours_left * 3600)


def test_a_short_trial_day_is_a_fixed_window() -> None:
    assert QuotaDay(60).at(125.0) == ("w60-2", 55.0)


async def test_freshness_stretches_when_spending_through_the_governor_runs_ahead_of_the_day() -> None:
    call = Call()
    clock = Clock(datetime(2026, 12, 3, 6, tzinfo=PACIFIC).timestamp())  # a quarter of the day gone
    budget = QuotaBudget(100, QuotaDay(YOUTUBE_DAY_S), clock)
    governed = governor(call, clock, budget)
    assert budget.stretch() == 1.0
    for _ in range(25):
        await governed([A])
    assert budget.stretch() == 1.0  # 75 % of the budget for 75 % of the day: on pace

    for _ in range(25):
        await governed([A])

    assert budget.stretch() == pytest.approx(0.75 / 0.5)  # half the budget for three quarters of the day
    clock.now += 18 * 3600  # the next day: nothing spent
    assert budget.stretch() == 1.0


#: A trial day of 9,600 s: a window of the pace is 100 s (1/96 of it), 9,600 units spend 1 a second evenly.
TRIAL_S = 9_600


class Paced:
    """A budget of ``units`` over a trial day on a manual clock, spent by hand as the ledger says."""

    def __init__(self, units: int = TRIAL_S) -> None:
        self.clock = Clock(10 * TRIAL_S)  # the start of a trial day
        self.budget = QuotaBudget(units, QuotaDay(TRIAL_S), self.clock)
        self.spent = 0

    def spend(self, units: int, over_s: float) -> float:
        """``units`` spent evenly over ``over_s`` seconds (the stretch read at each), then the stretch."""
        step_s = over_s / max(units, 1)
        for _ in range(units):
            self.clock.now += step_s
            self.spent += 1
            self.budget.seen(self.budget.now()[0], self.spent)
            self.budget.stretch()
        if not units:
            self.clock.now += over_s
        return self.budget.stretch()


def test_spending_at_the_even_rate_never_stretches() -> None:
    day = Paced()

    assert [day.spend(100, 100.0) for _ in range(20)] == [1.0] * 20


def test_a_window_spent_twice_as_fast_as_even_stretches_by_about_its_square_root() -> None:
    day = Paced()
    day.spend(100, 100.0)  # a window on the line

    stretched = day.spend(200, 100.0)  # twice the even rate of what is left

    assert stretched == pytest.approx((200 / 100 * (TRIAL_S - 200) / (TRIAL_S - 300)) ** 0.5, rel=0.02)


def test_spending_that_answers_the_stretch_settles_on_the_even_line() -> None:
    # Caches spend in inverse proportion to the stretch: 2 units a second at 1.
    day, stretches = Paced(), []
    for _ in range(40):
        stretches.append(day.spend(round(200 / day.budget.stretch()), 100.0))

    assert stretches[-1] == pytest.approx(2.0, rel=0.1)
    spent_share, day_share = day.spent / TRIAL_S, 4_000 / TRIAL_S
    assert abs(spent_share - day_share) < 0.05  # on the line, a few windows' overshoot at most


def test_after_a_burst_the_rest_is_spread_over_the_rest_of_the_day_not_stretched_hard_until_it_catches_up() -> (
    None
):
    # Caches spend in inverse proportion to the stretch: 1 unit a second (the even rate) at 1.
    day = Paced()
    for _ in range(48):  # half the day on the line
        day.spend(100, 100.0)

    burst = day.spend(1_920, 1.0)  # a fifth of the budget in a second

    # Behind the line: at least its ratio (half the day left, 30 % of the budget), not the cap.
    assert burst == pytest.approx(0.5 / 0.3, rel=0.01)
    after = [day.spend(round(100 / day.budget.stretch()), 100.0) for _ in range(47)]
    # The window that saw the burst doubles the stretch at most; then it settles where the rest
    # of the day is spread evenly (0.6 units a second: 1 / 0.6), the burst not paid back by more.
    assert max(after) <= 2 * burst
    assert after[-1] == pytest.approx(1 / 0.6, rel=0.1)
    assert 0.95 * TRIAL_S <= day.spent <= TRIAL_S


def test_a_quiet_start_leaves_the_rest_of_the_day_its_whole_budget() -> None:
    day = Paced()
    day.spend(0, TRIAL_S / 2)  # nothing asked all morning

    # Twice the day's even rate is the even rate of what is left: no stretch.
    assert [day.spend(200, 100.0) for _ in range(10)] == [1.0] * 10


def test_a_quiet_window_lowers_the_stretch_by_half_at_most() -> None:
    day = Paced()
    day.spend(100, 100.0)
    high = day.spend(400, 100.0)

    assert high > 1.0
    quiet = day.spend(0, 100.0)
    day_left, budget_left = (TRIAL_S - 300) / TRIAL_S, (TRIAL_S - 500) / TRIAL_S
    assert quiet == pytest.approx(max(high / 2, day_left / budget_left))  # or the line's ratio


def test_a_spent_budget_stretches_to_the_cap_until_the_day_ends_and_the_next_day_starts_unstretched() -> None:
    day = Paced(units=960)
    spent = day.spend(960, TRIAL_S / 4)  # every unit in the first quarter

    assert spent == MAX_STRETCH
    assert day.spend(0, TRIAL_S / 2) == MAX_STRETCH  # the evening: still nothing left
    day.clock.now += TRIAL_S / 4  # the next day: nothing spent, as far as this process knows
    assert day.budget.stretch() == 1.0
    day.spent = 0
    assert day.spend(10, 100.0) == 1.0  # its first units: a day of its own, on the line


def test_a_small_budget_measures_its_rate_over_several_units() -> None:
    # 96 units a day: a window of 1/96 of the day would see one unit or none.
    day = Paced(units=96)
    day.spend(1, 100.0)

    assert day.budget.stretch() == 1.0  # on the line after one unit: no window closed on it
    day.spend(7, 700.0)
    assert day.budget.stretch() == 1.0  # 8 units in 800 s: the first window, on the line


async def test_an_unreachable_ledger_makes_no_call_and_says_it_is_this_services_state_not_youtube() -> None:
    call = Call()
    budget = QuotaBudget(10, QuotaDay(YOUTUBE_DAY_S), Clock(TEN_AM))
    governed = QuotaGovernor(
        call, QuotaSpender(DownLedger(), budget, CapturingEventLog(), RecordingMetrics())
    )

    answer = await governed([A])

    assert isinstance(answer.failure(), SharedStateUnavailable)
    assert call.calls == 0


async def test_a_count_being_recounted_makes_no_call_and_says_so_not_that_the_budget_is_spent() -> None:
    call = Call()
    budget = QuotaBudget(10, QuotaDay(YOUTUBE_DAY_S), Clock(TEN_AM))
    ledger = DownLedger("recounting")
    governed = QuotaGovernor(call, QuotaSpender(ledger, budget, CapturingEventLog(), RecordingMetrics()))

    answer = await governed([A])

    refused = answer.failure()
    assert isinstance(refused, SharedStateUnavailable) and "recounted" in refused.detail
    assert call.calls == 0
    assert budget.left() == 10  # nothing seen spent: the count is not known yet


def test_a_budget_needs_at_least_one_unit() -> None:
    with pytest.raises(ValueError, match="at least one unit"):
        governor(Call(), Clock(), budget=0)


async def test_the_spender_affords_what_is_left_of_the_day_as_its_ledger_last_said() -> None:
    clock = Clock(1_000.0)
    budget = QuotaBudget(5, QuotaDay(3_600), clock)
    spender = QuotaSpender(MemoryQuotaLedger(), budget, CapturingEventLog(), RecordingMetrics())
    assert spender.afford(5) is None  # nothing spent yet

    assert await spender.spend() is None and await spender.spend() is None
    refused = spender.afford(4)

    assert spender.afford(3) is None
    assert isinstance(refused, QuotaExhausted) and refused.retry_after_s == 3_600 - 1_000
    assert "needs 4 more" in refused.detail and "3 are left" in refused.detail
    clock.now += 3_600  # the next day: all of it again
    assert spender.afford(5) is None
