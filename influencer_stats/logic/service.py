"""The stats use case: thin async orchestration over the algebras."""

from __future__ import annotations

from returns.result import Failure, Result, Success

from influencer_stats.algebras import CollectionStore, EventLog, VideoStatsSource
from influencer_stats.domain.models import CollectionId, CollectionStats, StatsError
from influencer_stats.logic.stats import EMPTY_STATS, collection_stats, distinct


async def get_stats(
    collection_id: CollectionId,
    store: CollectionStore,
    source: VideoStatsSource,
    log: EventLog,
) -> Result[CollectionStats, StatsError]:
    """Load a collection, fetch its distinct videos' stats in one call, aggregate.

    Every expected failure comes back as a ``Failure`` value: the collection
    does not exist, the store is down, or the upstream failed.
    """
    # Success first in each match: a class pattern that fails costs an ABC instance check.
    match await store.get(collection_id):
        case Success(collection):
            videos = distinct(collection.videos)
        case Failure(store_error):
            return Failure(store_error)
    if not videos:
        return Success(EMPTY_STATS)
    match await source.fetch(videos):
        case Success(batch):
            stats = collection_stats(videos, batch)
        case Failure(upstream_error):
            log.warning(
                "stats.upstream_failed",
                collection=collection_id,
                videos=len(videos),
                error=type(upstream_error).__name__,
                detail=upstream_error.detail,
            )
            return Failure(upstream_error)
    log.info(
        "stats.computed",
        collection=collection_id,
        videos=stats.videos,
        missing=len(stats.missing),
    )
    return Success(stats)
