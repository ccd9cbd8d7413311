"""The stats use case (``GetStats``, the stats query the edge calls), run against in-memory fakes."""

from __future__ import annotations

from collections.abc import Sequence

from returns.result import Failure, Result, Success

from influencer_stats.algebras import CollectionStatsQuery, CollectionStore, EventLog, VideoStatsSource
from influencer_stats.domain.models import (
    CacheInfo,
    CollectionId,
    CollectionNotFound,
    QuotaExceeded,
    StatsAnswer,
    StatsError,
    UpstreamError,
    VideoBatch,
    VideoId,
)
from influencer_stats.interpreters.collections.memory_dict import DictCollectionStore
from influencer_stats.interpreters.videos.fake import FakeVideoStatsSource
from influencer_stats.interpreters.videos.synthetic import synthetic_stats
from influencer_stats.logic.service import GetStats
from influencer_stats.testing.event_log import CapturingEventLog

ONE = CollectionId("campaign-1")
A, B, UNKNOWN = VideoId("-4lB5EKS5Uk"), VideoId("-jlLkTtgWUk"), VideoId("X0000000000")


class RecordingSource:
    """Answers with a scripted result and records every request."""

    def __init__(self, result: Result[VideoBatch, UpstreamError]) -> None:
        self.result = result
        self.requests: list[tuple[VideoId, ...]] = []

    async def fetch(self, ids: Sequence[VideoId]) -> Result[VideoBatch, UpstreamError]:
        self.requests.append(tuple(ids))
        return self.result


async def get_stats(
    collection_id: CollectionId, store: CollectionStore, source: VideoStatsSource, log: EventLog
) -> Result[StatsAnswer, StatsError]:
    query: CollectionStatsQuery = GetStats(store, source, log)  # the use case is the stats query
    return await query.stats(collection_id)


async def test_stats_of_a_saved_collection_sum_its_videos() -> None:
    store = DictCollectionStore()
    await store.save(ONE, (A, B))

    result = await get_stats(ONE, store, FakeVideoStatsSource(), CapturingEventLog())

    expected_views = synthetic_stats(A).views + synthetic_stats(B).views
    match result:
        case Success(StatsAnswer(stats, cache)):
            assert stats.impressions == expected_views
            assert stats.videos == 2
            assert cache is None  # every video fetched now
        case Failure(error):
            raise AssertionError(error)


async def test_each_distinct_video_is_fetched_once_in_a_single_call() -> None:
    store = DictCollectionStore()
    await store.save(ONE, (A, B, A, B, A))
    source = RecordingSource(Success(VideoBatch({})))

    await get_stats(ONE, store, source, CapturingEventLog())

    assert source.requests == [(A, B)]


async def test_unknown_videos_are_listed_as_missing() -> None:
    store = DictCollectionStore()
    await store.save(ONE, (A, UNKNOWN))

    result = await get_stats(ONE, store, FakeVideoStatsSource(), CapturingEventLog())

    assert result.map(lambda a: (a.stats.videos, a.stats.missing)) == Success((1, (UNKNOWN,)))


async def test_an_unknown_collection_is_not_found_and_the_source_is_not_called() -> None:
    source = RecordingSource(Success(VideoBatch({})))

    result = await get_stats(ONE, DictCollectionStore(), source, CapturingEventLog())

    assert result == Failure(CollectionNotFound(ONE))
    assert source.requests == []


async def test_an_empty_collection_is_zeros_without_an_upstream_call() -> None:
    store = DictCollectionStore()
    await store.save(ONE, ())
    source = RecordingSource(Failure(QuotaExceeded("should not be asked")))

    result = await get_stats(ONE, store, source, CapturingEventLog())

    assert result.map(
        lambda a: (a.stats.impressions, a.stats.engagements, a.stats.score, a.stats.videos)
    ) == (Success((0, 0, 0, 0)))
    assert source.requests == []


async def test_an_upstream_failure_comes_back_as_the_same_value_and_is_logged() -> None:
    store = DictCollectionStore()
    await store.save(ONE, (A,))
    log = CapturingEventLog()
    quota = QuotaExceeded("daily quota", retry_after_s=3600)

    result = await get_stats(ONE, store, RecordingSource(Failure(quota)), log)

    assert result == Failure(quota)
    [event] = log.named("stats.upstream_failed")
    assert event.level == "warning"
    assert event.fields["error"] == "QuotaExceeded"


async def test_a_successful_computation_is_logged_for_operators() -> None:
    store = DictCollectionStore()
    await store.save(ONE, (A, UNKNOWN))
    log = CapturingEventLog()

    await get_stats(ONE, store, FakeVideoStatsSource(), log)

    [event] = log.named("stats.computed")
    assert event.fields == {"collection": ONE, "videos": 1, "missing": 1}


async def test_an_answer_from_cached_videos_says_how_a_cache_served_them() -> None:
    store = DictCollectionStore()
    await store.save(ONE, (A,))
    served = CacheInfo(True, age_s=40.0, ttl_s=-10.0, stale_reason="revalidating")
    source = RecordingSource(Success(VideoBatch({A: synthetic_stats(A)}, cache=served)))

    result = await get_stats(ONE, store, source, CapturingEventLog())

    assert result.map(lambda a: (a.stats.videos, a.cache)) == Success((1, served))


async def test_nothing_is_kept_so_invalidating_changes_no_answer() -> None:
    store = DictCollectionStore()
    await store.save(ONE, (A,))
    use_case = GetStats(store, FakeVideoStatsSource(), CapturingEventLog())
    before = await use_case.stats(ONE)

    await use_case.invalidate(ONE)

    assert await use_case.stats(ONE) == before
