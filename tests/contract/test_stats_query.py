"""The CollectionStatsQuery contract, run against every interpreter.

Each is wired the way the composition root wires it: writes go through the
store it hands back.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest
from returns.result import Failure

from influencer_stats.algebras import CollectionStatsQuery, CollectionStore
from influencer_stats.interpreters.collections.memory_dict import DictCollectionStore
from influencer_stats.interpreters.collections.redis_store import RedisCollectionStore
from influencer_stats.interpreters.stats.cache import CachedStats, InvalidatingStore
from influencer_stats.interpreters.stats.computed import ComputedStats
from influencer_stats.interpreters.stats.redis_cache import RedisCachedStats
from influencer_stats.interpreters.videos.fake import FakeVideoStatsSource
from influencer_stats.interpreters.videos.synthetic import synthetic_stats
from influencer_stats.logic.models import CollectionId, CollectionNotFound, VideoId
from influencer_stats.testing.event_log import CapturingEventLog
from tests.integration.shared_redis import closing_client, shared_redis_url, unique_prefix

Wiring = tuple[CollectionStatsQuery, CollectionStore]


def computed() -> Wiring:
    store = DictCollectionStore()
    return ComputedStats(store, FakeVideoStatsSource(), CapturingEventLog()), store


def cached() -> Wiring:
    store = DictCollectionStore()
    log = CapturingEventLog()
    query = CachedStats(ComputedStats(store, FakeVideoStatsSource(), log), time.monotonic, log)
    return query, InvalidatingStore(store, query)


def redis_cached() -> Wiring:
    client, prefix = closing_client(shared_redis_url()), unique_prefix()
    store = RedisCollectionStore(client, prefix=prefix)
    log = CapturingEventLog()
    query = RedisCachedStats(
        ComputedStats(store, FakeVideoStatsSource(), log), client, time.time, log, prefix=prefix
    )
    return query, InvalidatingStore(store, query)


QUERIES: dict[str, Callable[[], Wiring]] = {"computed": computed, "cached": cached, "redis": redis_cached}
ONE = CollectionId("one")
A, B = VideoId("-4lB5EKS5Uk"), VideoId("-jlLkTtgWUk")


@pytest.fixture(params=list(QUERIES))
def wiring(request: pytest.FixtureRequest) -> Wiring:
    return QUERIES[request.param]()


async def test_stats_sum_the_collections_videos(wiring: Wiring) -> None:
    query, store = wiring
    await store.save(ONE, (A, B))

    result = await query.stats(ONE)

    assert result.unwrap().stats.impressions == synthetic_stats(A).views + synthetic_stats(B).views


async def test_an_unknown_collection_is_not_found(wiring: Wiring) -> None:
    query, _ = wiring

    assert await query.stats(ONE) == Failure(CollectionNotFound(ONE))


async def test_every_answer_after_a_write_reflects_it(wiring: Wiring) -> None:
    query, store = wiring
    await store.save(ONE, (A, B))
    await query.stats(ONE)

    await store.save(ONE, (A,))

    assert (await query.stats(ONE)).unwrap().stats.videos == 1


async def test_after_a_delete_the_collection_is_not_found(wiring: Wiring) -> None:
    query, store = wiring
    await store.save(ONE, (A,))
    await query.stats(ONE)

    await store.delete(ONE)

    assert await query.stats(ONE) == Failure(CollectionNotFound(ONE))


async def test_concurrent_readers_and_writers_only_ever_see_written_values(wiring: Wiring) -> None:
    query, store = wiring
    values = [(A,), (A, B), ()]
    possible = {0, 1, 2}
    await store.save(ONE, values[0])

    async def writer(n: int) -> None:
        await store.save(ONE, values[n % 3])

    async def reader() -> int:
        return (await query.stats(ONE)).unwrap().stats.videos

    results = await asyncio.gather(*(reader() if n % 2 else writer(n) for n in range(200)))
    await store.save(ONE, values[1])

    assert {r for r in results if r is not None} <= possible
    assert (await query.stats(ONE)).unwrap().stats.videos == 2
