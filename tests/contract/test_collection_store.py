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
from influencer_stats.domain.models import (
    Collection,
    CollectionId,
    CollectionNotFound,
    Created,
    Replaced,
    Revision,
    RevisionChanged,
    VideoId,
)
from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
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


async def pages(
    store: CollectionStore, limit: int, after: CollectionId | None = None
) -> list[tuple[CollectionId, ...]]:
    """Every page from ``after`` on, each asked for after the last id of the one before."""
    found: list[tuple[CollectionId, ...]] = []
    for _ in range(1_000):  # bounded: a store whose listing never ends fails here
        match await store.ids(after, limit):
            case Success(page):
                found.append(page)
            case other:
                raise AssertionError(other)
        if len(page) < limit:
            return found
        after = page[-1]
    raise AssertionError("the listing never ended")


async def test_ids_lists_every_collection_sorted(store: CollectionStore) -> None:
    assert await store.ids(None, 10) == Success(())
    for name in ("b", "c", "a"):
        await store.save(CollectionId(name), (A,))

    assert await store.ids(None, 10) == Success(("a", "b", "c"))


# Every character an id may hold, in an order that is not the sorted one.
MIXED_IDS = [
    CollectionId(i) for i in ("z", "_", "a.b", "A", "9", "-", ".", "a-b", "Z", "0", "a_b", "ab", "a")
]


@pytest.mark.parametrize("limit", [1, 2, 3, 5, 13, 14, 100])
async def test_pages_cover_every_id_once_in_byte_order_and_each_holds_at_most_limit(
    store: CollectionStore, limit: int
) -> None:
    for collection_id in MIXED_IDS:
        await store.save(collection_id, (A,))

    listed = await pages(store, limit)

    assert [i for page in listed for i in page] == sorted(MIXED_IDS, key=lambda i: i.encode())
    assert all(len(page) == limit for page in listed[:-1])
    assert len(listed[-1]) < limit  # the short page is the last, and may be empty


async def test_after_the_last_id_the_page_is_empty_and_after_a_gap_it_starts_at_the_next(
    store: CollectionStore,
) -> None:
    for name in ("b", "d", "f"):
        await store.save(CollectionId(name), (A,))

    assert await store.ids(CollectionId("f"), 5) == Success(())
    assert await store.ids(CollectionId("zz"), 5) == Success(())
    assert await store.ids(CollectionId("c"), 5) == Success(("d", "f"))  # "c" was never stored
    assert await store.ids(CollectionId("b"), 1) == Success(("d",))
    assert await store.ids(CollectionId("-"), 2) == Success(("b", "d"))


async def test_writes_between_pages_neither_repeat_nor_skip_the_ids_stored_throughout(
    store: CollectionStore,
) -> None:
    for n in range(10):
        await store.save(CollectionId(f"k{n}"), (A,))

    first = (await store.ids(None, 4)).unwrap()
    await store.delete(CollectionId("k1"))  # already listed
    await store.delete(CollectionId("k6"))  # not yet listed
    await store.save(CollectionId("k0a"), (A,))  # before the cursor: not listed now
    await store.save(CollectionId("k5a"), (A,))  # after it: listed
    rest = [i for page in await pages(store, 4, after=first[-1]) for i in page]

    assert first == ("k0", "k1", "k2", "k3")
    assert rest == ["k4", "k5", "k5a", "k7", "k8", "k9"]


async def test_a_deleted_id_is_not_listed_and_a_saved_again_one_is_listed_once(
    store: CollectionStore,
) -> None:
    await store.save(ONE, (A,))
    await store.save(TWO, (B,))
    await store.delete(ONE)
    await store.save(TWO, (C,))

    assert await store.ids(None, 10) == Success((TWO,))
    await store.save(ONE, (A,))
    assert await store.ids(None, 10) == Success((ONE, TWO))


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


async def revision_of(store: CollectionStore, collection_id: CollectionId) -> Revision:
    return (await store.get(collection_id)).unwrap().revision


async def test_every_write_gives_a_new_revision_that_get_returns_never_one_seen_before(
    store: CollectionStore,
) -> None:
    seen: set[Revision] = set()
    for n in range(10):  # a delete and a re-creation included: no per-id counter starting over
        created = (await store.save(ONE, (A,))).unwrap()
        replaced = (await store.save(ONE, (B,) * n)).unwrap()
        assert await revision_of(store, ONE) == replaced.revision
        seen |= {created.revision, replaced.revision}
        await store.delete(ONE)

    assert len(seen) == 20
    assert "" not in seen


async def test_replace_if_the_revision_read_replaces_and_gives_a_new_revision(store: CollectionStore) -> None:
    saved = (await store.save(ONE, (A,))).unwrap()

    replaced = await store.replace_if(ONE, (B, C), saved.revision)

    assert replaced == Success(Replaced())
    assert replaced.unwrap().revision not in ("", saved.revision)
    assert await store.get(ONE) == Success(Collection(ONE, (B, C)))
    assert await revision_of(store, ONE) == replaced.unwrap().revision


async def test_replace_if_a_revision_written_over_is_refused_and_changes_nothing(
    store: CollectionStore,
) -> None:
    read = (await store.save(ONE, (A,))).unwrap().revision
    await store.save(ONE, (B,))  # a write between the read and the replace
    now = await revision_of(store, ONE)

    assert await store.replace_if(ONE, (C,), read) == Failure(RevisionChanged(ONE))
    assert await store.get(ONE) == Success(Collection(ONE, (B,)))
    assert await revision_of(store, ONE) == now


async def test_replace_if_never_creates_a_collection_deleted_or_re_created_since(
    store: CollectionStore,
) -> None:
    read = (await store.save(ONE, (A,))).unwrap().revision
    await store.delete(ONE)

    assert await store.replace_if(ONE, (C,), read) == Failure(CollectionNotFound(ONE))
    assert await store.get(ONE) == Failure(CollectionNotFound(ONE))
    assert await store.ids(None, 10) == Success(())

    await store.save(ONE, (B,))  # re-created: a new revision, never the one read before
    assert await store.replace_if(ONE, (C,), read) == Failure(RevisionChanged(ONE))
    assert await store.get(ONE) == Success(Collection(ONE, (B,)))


async def test_of_concurrent_replaces_of_one_revision_exactly_one_wins(store: CollectionStore) -> None:
    read = (await store.save(ONE, (A,))).unwrap().revision
    values = [tuple(synthetic_video_id(n * 10 + k) for k in range(2)) for n in range(30)]

    outcomes = await asyncio.gather(*(store.replace_if(ONE, v, read) for v in values))

    won = [(v, o.unwrap()) for v, o in zip(values, outcomes, strict=True) if isinstance(o, Success)]
    assert len(won) == 1
    assert [o for o in outcomes if isinstance(o, Failure)] == [Failure(RevisionChanged(ONE))] * 29
    videos, replaced = won[0]
    assert await store.get(ONE) == Success(Collection(ONE, videos))
    assert await revision_of(store, ONE) == replaced.revision


async def test_replaces_racing_saves_and_deletes_never_resurrect_nor_overwrite_a_later_write(
    store: CollectionStore,
) -> None:
    for n in range(20):
        read = (await store.save(ONE, (A,))).unwrap().revision
        other = store.delete(ONE) if n % 2 else store.save(ONE, (B,))

        replaced, written = await asyncio.gather(store.replace_if(ONE, (C,), read), other)

        assert isinstance(written, Success)
        final = await store.get(ONE)
        if n % 2:  # deleted: never brought back by the replace
            assert final == Failure(CollectionNotFound(ONE))
        elif isinstance(replaced, Success):  # the replace came first: the save is on top
            assert final == Success(Collection(ONE, (B,)))
        else:
            assert replaced == Failure(RevisionChanged(ONE))
            assert final == Success(Collection(ONE, (B,)))
        await store.delete(ONE)


#: The stores that reach no server: what a restart keeps of theirs is what their declared files
#: hold (``Entry.paths``), everything with files, nothing without (in memory only).
LOCAL = [entry.name for entry in STORES if not entry.needs]


@pytest.mark.parametrize("name", LOCAL)
async def test_a_restart_keeps_exactly_what_the_stores_declared_files_hold(name: str, tmp_path: Path) -> None:
    async with wired(tmp_path, {"store": name}) as wiring:
        before = await build_store(wiring)
        await before.save(ONE, (A, B))
        await before.save(TWO, (B,))
        written = (await before.save(ONE, (C,))).unwrap().revision
        await before.delete(TWO)
    async with wired(tmp_path, {"store": name}) as wiring:  # the same files: the same tmp_path
        after = await build_store(wiring)

        assert await after.get(TWO) == Failure(CollectionNotFound(TWO))
        if not STORES[name].paths:  # in memory only: a restart starts empty
            assert await after.get(ONE) == Failure(CollectionNotFound(ONE))
            assert await after.ids(None, 10) == Success(())
            return
        assert await after.get(ONE) == Success(Collection(ONE, (C,)))
        assert await after.ids(None, 10) == Success((ONE,))
        assert await revision_of(after, ONE) == written  # the revision is durable too
        assert isinstance(await after.replace_if(ONE, (A,), written), Success)
