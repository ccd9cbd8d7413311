"""The refresher and the read-again race, on a manual clock, a dict store and a scripted reader:
no sleeps."""

from __future__ import annotations

import contextlib
from collections.abc import Coroutine
from typing import Any

from returns.result import Result, Success

from influencer_stats.algebras import CollectionStore, EventLog
from influencer_stats.algebras.sources import SourceReader
from influencer_stats.domain.models import (
    CollectionId,
    CollectionNotFound,
    CollectionSource,
    NotFromASource,
    ReadError,
    Replaced,
    Revision,
    RevisionChanged,
    StoreUnavailable,
    VideoId,
)
from influencer_stats.interpreters.collections.memory_dict import DictCollectionStore
from influencer_stats.interpreters.sources.memory import MemoryCollectionSources
from influencer_stats.logic.imports import CollectionImports, Refreshes, SourceRefresher
from influencer_stats.testing.clock import ManualClock
from influencer_stats.testing.event_log import CapturingEventLog

DAY = 86_400.0
START = 1_700_006_400.0
A, B, IDS = CollectionId("a"), CollectionId("b"), CollectionId("ids")
V = [VideoId(f"video{n:06d}") for n in range(10)]


class GrowingReader:
    """Each read of a list gives one video more than the last; ``during`` runs inside a read."""

    def __init__(self) -> None:
        self.reads: list[str] = []
        self.during: list[Coroutine[Any, Any, None]] = []

    async def videos(self, source: CollectionSource, limit: int) -> Result[tuple[VideoId, ...], ReadError]:
        self.reads.append(source.id)
        for step in self.during:
            await step
        self.during.clear()
        return Success(tuple(V[: self.reads.count(source.id)]))


def new_imports(
    store: CollectionStore, sources: MemoryCollectionSources, reader: SourceReader, log: EventLog
) -> CollectionImports:
    return CollectionImports(
        store, sources, reader, log, max_videos=100, refresh_min_interval_s=0, clock=ManualClock()
    )


class Setup:
    def __init__(self, *, short: bool = False) -> None:
        self.store = DictCollectionStore()
        self.sources = MemoryCollectionSources(100)
        self.reader = GrowingReader()
        self.log = CapturingEventLog()
        self.imports = new_imports(self.store, self.sources, self.reader, self.log)
        self.clock = ManualClock(START)
        self.short = short

    def refresher(self, imports: CollectionImports | None = None) -> SourceRefresher:
        async def no_sleep(_: float) -> None:
            raise AssertionError("take() never sleeps")

        return SourceRefresher(
            self.store,
            imports or self.imports,
            self.log,
            interval_s=DAY,
            clock=self.clock,
            short=lambda: self.short,
            sleep=no_sleep,
        )


async def test_a_pass_refreshes_each_collection_read_from_a_source_and_leaves_ids_alone() -> None:
    setup = Setup()
    await setup.imports.read(A, CollectionSource("playlist", "PLa"))
    await setup.imports.read(B, CollectionSource("channel", "UC" + "b" * 22))
    await setup.store.save(IDS, (V[9],))

    done = await setup.refresher().take(1)

    assert done == Refreshes(refreshed=2)
    assert (await setup.store.get(A)).unwrap().videos == tuple(V[:2])  # a new upload joined
    assert (await setup.store.get(IDS)).unwrap().videos == (V[9],)
    assert setup.log.named("sources.refreshes")[-1].fields["refreshed"] == 2


async def test_one_refresh_per_collection_per_interval_whoever_takes_the_pass() -> None:
    setup = Setup()
    await setup.imports.read(A, CollectionSource("playlist", "PLa"))
    other = new_imports(setup.store, setup.sources, setup.reader, setup.log)

    first, second = await setup.refresher().take(7), await setup.refresher(other).take(7)
    later = await setup.refresher().take(8)

    assert (first.refreshed, second.taken_elsewhere, later.refreshed) == (1, 1, 1)
    assert setup.reader.reads == ["PLa"] * 3


async def test_while_the_budget_is_short_refreshes_wait_for_a_later_interval_unclaimed() -> None:
    setup = Setup(short=True)
    await setup.imports.read(A, CollectionSource("playlist", "PLa"))

    deferred = await setup.refresher().take(3)
    setup.short = False
    done = await setup.refresher().take(3)

    assert (deferred.deferred, done.refreshed) == (1, 1)


async def test_ids_saved_while_the_source_was_read_win_over_the_refresh() -> None:
    setup = Setup()
    await setup.imports.read(A, CollectionSource("playlist", "PLa"))

    async def saved_as_ids() -> None:
        await setup.imports.saved_as_ids(A)
        await setup.store.save(A, (V[9],))

    setup.reader.during.append(saved_as_ids())
    refreshed = await setup.imports.refresh(A)

    assert refreshed.failure() == NotFromASource(A)
    assert (await setup.store.get(A)).unwrap().videos == (V[9],)


class DeletingBeforeSave(DictCollectionStore):
    """Deletes the collection (as a DELETE would: then its source) just before the next replace."""

    def __init__(self) -> None:
        super().__init__()
        self.sources: MemoryCollectionSources | None = None

    async def replace_if(
        self, collection_id: CollectionId, videos: tuple[VideoId, ...], revision: Revision
    ) -> Result[Replaced, CollectionNotFound | RevisionChanged | StoreUnavailable]:
        if self.sources is not None:
            await self.delete(collection_id)
            await self.sources.put(collection_id, None)
            self.sources = None
        return await super().replace_if(collection_id, videos, revision)


async def test_a_collection_deleted_as_its_refresh_saves_stays_deleted() -> None:
    setup = Setup()
    store = DeletingBeforeSave()
    imports = new_imports(store, setup.sources, setup.reader, setup.log)
    await imports.read(A, CollectionSource("playlist", "PLa"))
    store.sources = setup.sources

    refreshed = await imports.refresh(A)

    assert refreshed.failure() == CollectionNotFound(A)
    assert isinstance((await store.get(A)).failure(), CollectionNotFound)
    assert await setup.sources.get(A) == Success(None)


async def test_run_takes_a_pass_at_once_then_one_at_each_intervals_start() -> None:
    setup = Setup()
    await setup.imports.read(A, CollectionSource("playlist", "PLa"))
    slept: list[float] = []

    class EnoughError(Exception):
        pass

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        setup.clock.now += seconds
        if len(slept) == 2:
            raise EnoughError

    refresher = SourceRefresher(
        setup.store,
        setup.imports,
        setup.log,
        interval_s=DAY,
        clock=setup.clock,
        short=lambda: False,
        sleep=sleep,
    )
    with contextlib.suppress(EnoughError):
        await refresher.run()

    assert setup.reader.reads == ["PLa"] * 3  # the import, then two passes
    assert slept[1] == DAY
