"""The CollectionStore contract, run against every registered store (the TCK).

A new store meets it as soon as it is registered in ``bootstrap.stores``:
this file is parametrized from the registry and builds each store with the
root's own builder.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from returns.result import Failure, Success

from influencer_stats.algebras import CollectionStore
from influencer_stats.bootstrap.root import build_store
from influencer_stats.bootstrap.stores import STORES
from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from influencer_stats.logic.models import (
    Collection,
    CollectionId,
    CollectionNotFound,
    Created,
    Replaced,
    VideoId,
)
from tests.contract.wired import wired

ONE, TWO = CollectionId("one"), CollectionId("two")
A, B, C = VideoId("-4lB5EKS5Uk"), VideoId("-jlLkTtgWUk"), VideoId("1FEFpk-uIYo")


@pytest.fixture(params=STORES.names())
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[CollectionStore]:
    async with wired(tmp_path, {"store": request.param}) as wiring:
        yield await build_store(wiring)


async def test_saving_a_new_collection_creates_it(store: CollectionStore) -> None:
    assert await store.save(ONE, (A, B)) == Success(Created())
    assert await store.get(ONE) == Success(Collection(ONE, (A, B)))


async def test_saving_again_replaces_the_videos(store: CollectionStore) -> None:
    await store.save(ONE, (A, B))

    assert await store.save(ONE, (C,)) == Success(Replaced())
    assert await store.get(ONE) == Success(Collection(ONE, (C,)))


async def test_order_and_duplicates_are_kept(store: CollectionStore) -> None:
    await store.save(ONE, (C, A, C))

    assert await store.get(ONE) == Success(Collection(ONE, (C, A, C)))


async def test_an_empty_collection_is_a_collection(store: CollectionStore) -> None:
    await store.save(ONE, ())

    assert await store.get(ONE) == Success(Collection(ONE, ()))


async def test_an_unknown_id_is_not_found(store: CollectionStore) -> None:
    assert await store.get(ONE) == Failure(CollectionNotFound(ONE))


async def test_delete_removes_and_a_second_delete_is_not_found(store: CollectionStore) -> None:
    await store.save(ONE, (A,))
    await store.save(TWO, (B,))

    assert await store.delete(ONE) == Success(None)
    assert await store.get(ONE) == Failure(CollectionNotFound(ONE))
    assert await store.delete(ONE) == Failure(CollectionNotFound(ONE))
    assert await store.get(TWO) == Success(Collection(TWO, (B,)))


async def test_ids_lists_every_collection_sorted(store: CollectionStore) -> None:
    assert await store.ids() == Success(())
    for name in ("b", "c", "a"):
        await store.save(CollectionId(name), (A,))

    assert await store.ids() == Success(("a", "b", "c"))


async def test_a_large_collection_round_trips(store: CollectionStore) -> None:
    videos = tuple(synthetic_video_id(n) for n in range(5_000))

    await store.save(ONE, videos)

    assert await store.get(ONE) == Success(Collection(ONE, videos))


async def test_concurrent_writers_leave_one_of_the_written_values(store: CollectionStore) -> None:
    values = [tuple(synthetic_video_id(n * 10 + k) for k in range(3)) for n in range(50)]

    outcomes = await asyncio.gather(*(store.save(ONE, v) for v in values))

    assert sum(o == Success(Created()) for o in outcomes) == 1
    match await store.get(ONE):
        case Success(collection):
            assert collection.videos in values
        case other:
            raise AssertionError(other)
