"""Pure aggregation of video statistics into collection statistics.

impressions = sum of views
engagements = sum of (likes + comments + dislikes)
score       = engagements + sum of likes

Each distinct video counts once, however often a collection lists it.
"""

from __future__ import annotations

from collections.abc import Iterable

from influencer_stats.domain.models import CollectionStats, VideoBatch, VideoId, VideoStats


def distinct(videos: Iterable[VideoId]) -> tuple[VideoId, ...]:
    """The ids in first-seen order, each once."""
    return tuple(dict.fromkeys(videos))


def engagements(video: VideoStats) -> int:
    """Likes, comments and dislikes of one video."""
    return video.likes + video.comments + video.dislikes


def collection_stats(videos: Iterable[VideoId], batch: VideoBatch) -> CollectionStats:
    """Aggregate ``batch`` over the distinct ``videos`` it was fetched for.

    Ids absent from ``batch.stats`` contribute nothing; the ones the source
    reported missing are listed, in request order.
    """
    impressions = total_engagements = total_likes = counted = 0
    found = batch.stats
    for video_id in distinct(videos):
        stats = found.get(video_id)
        if stats is None:
            continue
        counted += 1
        impressions += stats.views
        total_engagements += engagements(stats)
        total_likes += stats.likes
    return CollectionStats(
        impressions=impressions,
        engagements=total_engagements,
        score=total_engagements + total_likes,
        videos=counted,
        missing=batch.missing,
    )


EMPTY_STATS = CollectionStats(impressions=0, engagements=0, score=0, videos=0, missing=())
