"""The stats formula, pinned by examples and by properties."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from influencer_stats.domain.models import VideoBatch, VideoId, VideoStats
from influencer_stats.logic.stats import EMPTY_STATS, collection_stats, distinct

A, B, C = VideoId("aaaaaaaaaaa"), VideoId("bbbbbbbbbbb"), VideoId("ccccccccccc")


def batch(**stats: VideoStats) -> VideoBatch:
    return VideoBatch({VideoId(k * 11): v for k, v in stats.items()})


def test_impressions_are_views_engagements_are_likes_comments_dislikes_and_score_adds_likes() -> None:
    found = batch(a=VideoStats(views=100, likes=10, comments=3, dislikes=2), b=VideoStats(views=50, likes=5))

    stats = collection_stats([A, B], found)

    assert (stats.impressions, stats.engagements, stats.score, stats.videos) == (150, 20, 35, 2)


def test_the_original_readme_example_sums_three_videos() -> None:
    found = batch(
        a=VideoStats(views=261734, likes=14237, comments=451, dislikes=928),
        b=VideoStats(views=1000, likes=100, comments=10),
        c=VideoStats(views=1),
    )

    stats = collection_stats([A, B, C], found)

    assert stats.impressions == 262735
    assert stats.engagements == 14237 + 451 + 928 + 100 + 10
    assert stats.score == stats.engagements + 14237 + 100


def test_a_video_listed_twice_counts_once() -> None:
    found = batch(a=VideoStats(views=7, likes=1))

    assert collection_stats([A, A, A], found) == collection_stats([A], found)


def test_missing_ids_are_reported_and_count_nothing() -> None:
    found = VideoBatch({A: VideoStats(views=5)}, missing=(B,))

    stats = collection_stats([A, B], found)

    assert (stats.impressions, stats.videos, stats.missing) == (5, 1, (B,))


def test_distinct_keeps_first_seen_order() -> None:
    assert distinct([B, A, B, C, A]) == (B, A, C)


video_ids = st.text(alphabet="abcdefghijk", min_size=11, max_size=11).map(VideoId)
counts = st.integers(min_value=0, max_value=10**12)
video_stats = st.builds(VideoStats, views=counts, likes=counts, comments=counts, dislikes=counts)
stat_maps = st.dictionaries(video_ids, video_stats, max_size=30)


@given(stat_maps)
def test_no_videos_means_zeros(found: dict[VideoId, VideoStats]) -> None:
    assert collection_stats([], VideoBatch(found)) == EMPTY_STATS


@given(stat_maps, st.randoms())
def test_order_does_not_matter(found: dict[VideoId, VideoStats], rnd: random.Random) -> None:
    ids = list(found)
    shuffled = ids[:]
    rnd.shuffle(shuffled)

    assert collection_stats(ids, VideoBatch(found)) == collection_stats(shuffled, VideoBatch(found))


@given(stat_maps, stat_maps)
def test_disjoint_collections_add_up(
    left: dict[VideoId, VideoStats], right: dict[VideoId, VideoStats]
) -> None:
    right = {k: v for k, v in right.items() if k not in left}
    both = VideoBatch({**left, **right})

    whole = collection_stats([*left, *right], both)
    a = collection_stats(left, both)
    b = collection_stats(right, both)

    assert whole.impressions == a.impressions + b.impressions
    assert whole.engagements == a.engagements + b.engagements
    assert whole.score == a.score + b.score
    assert whole.videos == a.videos + b.videos


@given(stat_maps)
def test_score_is_never_below_engagements_and_counts_each_like_twice(
    found: dict[VideoId, VideoStats],
) -> None:
    stats = collection_stats(found, VideoBatch(found))

    assert stats.score == stats.engagements + sum(v.likes for v in found.values())
    assert stats.score >= stats.engagements
