"""The day in a minute (``perf/day.py``), briefly: an hour's quota day of a small load, on the lab's jumping clock.

The quota and video_cache slices' both (it builds their parts): gone with the first of the two removed.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import replace

import pytest

from influencer_stats.bootstrap.videos import ids_per_call
from perf.day import VirtualLoop, main, simulate
from perf.day_report import RANKS, Day, Report, counted_percentile, percentile, render
from perf.profiles import service_settings

#: What a unit buys with the youtube profile's client here: 50 ids, or 1 without the batching slice.
PER_UNIT = ids_per_call(service_settings({"YOUTUBE_API_KEY": "test"}, "youtube")) or 1

#: An hour's quota day: 20 collections of 20 ids over 200, a request a second, 30 units of 50 ids
#: (48 keep every video within the 300 s TTL, so the budget is short of full freshness).
SHORT = Day(
    collections=20, videos=20, distinct=200, rate=1.0, budget=30 * 50 // PER_UNIT, day_s=3_600, seed=7
)


@pytest.fixture(scope="module")
def short_day() -> Report:
    return simulate(SHORT)


def _report(day: Day, distinct: int, *, refused: list[tuple[float, int]] | None = None) -> Report:
    return Report(
        day, distinct, 300.0, 0, 0, [], Counter(), refused or [], 0, [], Counter(), Counter(), False
    )


def test_a_short_day_spends_at_most_its_budget_and_serves_every_answer_it_does_not_refuse(
    short_day: Report,
) -> None:
    assert 0 < short_day.units <= SHORT.budget
    assert short_day.ids_called >= short_day.units  # every call carries at least one id
    assert short_day.answers and short_day.failed == 0
    assert all(age >= 0 for age in short_day.answers)
    # Every video of every served answer is aged: M videos an answer.
    assert short_day.video_ages.total() == len(short_day.answers) * SHORT.videos
    assert min(short_day.video_ages) >= 0
    assert short_day.refused_while_optimum_had_units() == 0  # none refused while the optimum had units


def test_a_short_day_reports_each_24th_of_the_day_with_units_that_only_grow(short_day: Report) -> None:
    spent = [units for units, _ in short_day.hourly]
    assert len(spent) == 24
    assert spent == sorted(spent) and spent[-1] <= short_day.units
    assert all(stretch >= 1.0 for _, stretch in short_day.hourly)


def test_the_same_seed_gives_the_same_day(short_day: Report) -> None:
    again = simulate(SHORT)

    assert (again.units, again.ids_called, again.answers) == (
        short_day.units,
        short_day.ids_called,
        short_day.answers,
    )


def test_the_optimum_refreshes_each_video_budget_times_50_over_distinct_a_day() -> None:
    report = _report(Day(budget=10_000, day_s=86_400), 3_000)

    assert report.refreshes_per_video == pytest.approx(10_000 * 50 / 3_000)
    assert report.optimum_s == pytest.approx(86_400 * 3_000 / (50 * 10_000))  # 518.4 s
    assert report.full_freshness_units == 60 * 288  # a full call of each 50 every 300 s


def test_a_refusal_counts_against_the_optimum_only_while_it_could_hold_every_video_asked() -> None:
    # 30 units hold 1,500 ids: asked 1,500 by then, the optimum had them; 1,501, it could not.
    report = _report(Day(budget=30), 2_000, refused=[(10.0, 1_500), (20.0, 1_501)])

    assert report.refused_while_optimum_had_units() == 1


def test_percentiles_by_nearest_rank_agree_whether_values_are_listed_or_counted() -> None:
    values = [5.0, 1.0, 3.0, 3.0, 9.0, 7.0, 2.0, 8.0, 4.0, 6.0]
    counts = Counter(int(v) for v in values)

    for q in (1, 50, 90, 99, 100):
        assert percentile(values, q) == counted_percentile(counts, q)
    assert percentile(values, 50) == 4.0 and percentile(values, 100) == 9.0
    assert percentile([], 50) == counted_percentile(Counter(), 50) == 0.0


def test_the_lab_s_loop_jumps_its_clock_to_the_next_timer_instead_of_waiting() -> None:
    async def a_day_of_sleeps() -> list[float]:
        loop = asyncio.get_running_loop()
        seen = []
        for _ in range(3):
            await asyncio.sleep(28_800)
            seen.append(loop.time())
        return seen

    with asyncio.Runner(loop_factory=VirtualLoop) as runner:
        assert runner.run(a_day_of_sleeps()) == [28_800.0, 57_600.0, 86_400.0]


def test_the_report_names_its_command_and_compares_each_age_with_the_optimum(short_day: Report) -> None:
    text = render(short_day, "python perf/day.py --budget 30")

    assert text.startswith("`python perf/day.py --budget 30`")
    rows = [line for line in text.splitlines() if line.startswith(("| p50 |", "| p99 |", "| max |"))]
    assert len(rows) == 3
    assert f"{short_day.optimum_s:,.0f} s |" in rows[2]


def test_the_command_line_prints_the_report(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--collections", "4", "--videos", "5", "--distinct", "20", "--rate", "0.5", "--budget", "5"]
    assert main([*args, "--day-s", "600"]) == 0

    out = capsys.readouterr().out
    assert "units spent: " in out and " of 5;" in out


def test_the_governor_s_pace_serves_younger_answers_than_the_former_rule_on_the_same_units() -> None:
    # The former rule (stretch by day left / budget left once behind the line, --pace 1) spent the
    # budget early and stretched the rest of the day; the governor's paces the spending rate (on
    # SHORT's 30 units its floor, the former rule, decides: a day of 60 units for 500 videos here).
    day = replace(SHORT, collections=30, videos=50, distinct=500, rate=2.0, budget=60 * 50 // PER_UNIT)
    paced, former = simulate(day), simulate(replace(day, pace=1.0))

    assert paced.units == former.units == day.budget
    assert not paced.refused and not former.refused
    assert percentile(paced.answers, 50) < percentile(former.answers, 50)
    assert percentile(paced.answers, 99) < percentile(former.answers, 99)


def test_the_report_shows_the_answers_of_the_most_and_least_popular_collections_apart(
    short_day: Report,
) -> None:
    text = render(short_day, "python perf/day.py")

    (line,) = [row for row in text.splitlines() if row.startswith("- answer age p50 / p99 by collection")]
    assert line.count(" s / ") == len([rank for rank in RANKS if rank in short_day.by_rank]) >= 2
    assert sum(len(ages) for ages in short_day.by_rank.values()) == len(short_day.answers)
