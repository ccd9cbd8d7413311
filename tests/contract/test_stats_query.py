"""The CollectionStatsQuery contract, run against the computed query and every registered cache.

Each is built and wired by the composition root itself: writes go through the
store it hands back. What a cache is for (the scenario its entry names) is the
``stats_cache`` slice's suite: tests/contract/test_stats_caches.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from returns.result import Failure

from influencer_stats.algebras import CollectionStatsQuery, CollectionStore
from influencer_stats.bootstrap.root import build_stats, build_store, build_video_stats
from influencer_stats.bootstrap.stats import STATS_WRAPPERS
from influencer_stats.domain.models import CollectionId, CollectionNotFound, VideoId
from influencer_stats.interpreters.videos.synthetic import synthetic_stats
from tests.contract.wired import wired

Wiring = tuple[CollectionStatsQuery, CollectionStore]
#: ``none`` is the computed query itself; every registered cache wraps it.
CACHES = ["none", *STATS_WRAPPERS.names()]


ONE = CollectionId("one")
A, B = VideoId("-4lB5EKS5Uk"), VideoId("-jlLkTtgWUk")


@pytest.fixture(params=CACHES)
async def wiring(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Wiring]:
    async with wired(tmp_path, {"cache": request.param, "store": "dict"}) as root:
        yield await build_stats(root, await build_store(root), await build_video_stats(root))


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
