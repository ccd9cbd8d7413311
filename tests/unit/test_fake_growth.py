"""The synthetic world grows: ``stats_at`` (a video's counters a time after the start) and the
fake source that reads them on its injected clock."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from returns.result import Success

from influencer_stats.domain.models import VideoBatch, VideoId, VideoStats
from influencer_stats.interpreters.videos.fake import FakeVideoStatsSource
from influencer_stats.interpreters.videos.synthetic import (
    GROWTH_STEP_S,
    LEAST_VIEWS_A_DAY,
    stats_at,
    synthetic_stats,
    synthetic_video_id,
    views_a_day,
)
from influencer_stats.testing.clock import ManualClock

A = VideoId("-4lB5EKS5Uk")  # the README's first video
B = VideoId("1FEFpk-uIYo")  # one without dislikes
GONE = VideoId("X0000000001")
HOUR, DAY = 3_600.0, 86_400.0

ids = st.integers(min_value=0, max_value=10**9).map(synthetic_video_id)
instants = st.floats(min_value=-DAY, max_value=400 * DAY, allow_nan=False)


def test_the_counters_are_the_starting_ones_until_the_first_minute_has_passed() -> None:
    start = synthetic_stats(A)
    assert stats_at(A, 0) == stats_at(A, GROWTH_STEP_S - 0.001) == stats_at(A, -HOUR) == start
    assert stats_at(A, GROWTH_STEP_S) != start


def test_the_counters_at_given_instants_are_exact() -> None:
    assert views_a_day(A) == 394_546  # 4.28 % of its 9,218,387 views
    assert stats_at(A, 0) == VideoStats(views=9_218_387, likes=77_072, comments=15_347, dislikes=3_183)
    assert stats_at(A, 60) == VideoStats(views=9_218_660, likes=77_074, comments=15_347, dislikes=3_183)
    assert stats_at(A, HOUR) == VideoStats(views=9_234_826, likes=77_209, comments=15_374, dislikes=3_188)
    assert stats_at(A, DAY) == VideoStats(views=9_612_933, likes=80_370, comments=16_003, dislikes=3_319)
    assert stats_at(B, DAY) == VideoStats(views=8_172_053, likes=217_762, comments=36_288, dislikes=0)


@given(ids, instants, instants)
def test_no_counter_ever_goes_down(video_id: str, one: float, other: float) -> None:
    early, late = stats_at(video_id, min(one, other)), stats_at(video_id, max(one, other))
    assert late.views >= early.views and late.likes >= early.likes
    assert late.comments >= early.comments and late.dislikes >= early.dislikes


@given(ids, st.integers(min_value=1, max_value=30))
def test_views_grow_at_their_own_pace_and_the_rest_in_proportion(video_id: str, days: int) -> None:
    start, later = synthetic_stats(video_id), stats_at(video_id, days * DAY)
    views, likes = later.views - start.views, later.likes - start.likes
    comments, dislikes = later.comments - start.comments, later.dislikes - start.dislikes

    assert views == days * views_a_day(video_id)  # a whole day is a whole number of steps
    assert max(start.views * 50 // 10_000, LEAST_VIEWS_A_DAY) <= views_a_day(video_id)
    assert views_a_day(video_id) <= max(start.views * 500 // 10_000, LEAST_VIEWS_A_DAY)
    assert likes == views * start.likes // start.views
    assert comments == (likes * start.comments // start.likes if start.likes else 0)
    assert views >= likes >= comments >= 0 and likes >= dislikes >= 0  # views fastest
    assert dislikes == 0 or start.dislikes > 0  # a video without dislikes gets none
    assert all(isinstance(n, int) for n in (later.views, later.likes, later.comments, later.dislikes))


async def test_the_fake_source_grows_its_videos_on_its_clock_at_its_speed() -> None:
    clock = ManualClock(1_000.0)
    source = FakeVideoStatsSource(clock=clock, speed=1_440)  # a day a minute

    first = await source.fetch([A, B, GONE])
    clock.now += 30  # half a day of the synthetic world
    later = await source.fetch([A, GONE])

    assert first == Success(VideoBatch({A: synthetic_stats(A), B: synthetic_stats(B)}, (GONE,)))
    assert later == Success(VideoBatch({A: stats_at(A, DAY / 2)}, (GONE,)))
    assert later.unwrap().stats[A].views == synthetic_stats(A).views + views_a_day(A) // 2


async def test_the_fake_source_counts_from_when_it_was_built_and_stands_still_at_speed_zero() -> None:
    clock = ManualClock(1_000.0)
    growing = FakeVideoStatsSource(clock=clock, speed=1)
    still = FakeVideoStatsSource(clock=clock, speed=0)

    clock.now += DAY
    a_day_on = (await growing.fetch([A])).unwrap().stats[A]
    clock.now -= 2 * DAY  # before it was built (time.monotonic, its clock, never goes back)
    back = (await growing.fetch([A])).unwrap().stats[A]

    assert a_day_on == stats_at(A, DAY) and back == synthetic_stats(A)
    clock.now += 5 * DAY
    assert (await still.fetch([A])).unwrap().stats[A] == synthetic_stats(A)
    assert (await FakeVideoStatsSource().fetch([A])).unwrap().stats[A] == synthetic_stats(A)
