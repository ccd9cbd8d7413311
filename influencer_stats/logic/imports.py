"""Collections read from a playlist or a channel: the import, the refresh, and the refresher."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from returns.result import Failure, Result, Success

from influencer_stats.algebras import CollectionStore, EventLog
from influencer_stats.algebras.sources import CollectionSources, SourceReader
from influencer_stats.domain.models import (
    Collection,
    CollectionId,
    CollectionNotFound,
    CollectionSource,
    Created,
    ImportFailure,
    KeptSource,
    NotFromASource,
    RefreshTooSoon,
    RevisionChanged,
    SaveOutcome,
    StoreUnavailable,
    VideoId,
)
from influencer_stats.logic.passes import every_collection, every_interval
from influencer_stats.logic.refreshes import RecentReads, SingleFlight


@dataclass(frozen=True, slots=True)
class Imported:
    """A collection saved from its source: its videos now, and how many of them were not in it
    before (``added``) and how many it no longer holds (``removed``), counted by id."""

    videos: tuple[VideoId, ...]
    source: CollectionSource
    outcome: SaveOutcome
    added: int
    removed: int


class CollectionImports:
    """Saving a collection from a playlist or a channel, and reading it again later.

    ``read`` asks ``reader`` for the source's videos (at most ``max_videos``:
    more is refused before anything is saved), saves them in ``store``, then
    keeps the source in ``sources`` with the revision the save gave the
    collection (a failure there answers ``StoreUnavailable``: the write is not
    acknowledged, and repeating it mends it). ``refresh`` reads a stored
    collection's source again: new uploads join, videos gone from the list
    leave.

    A kept source is the collection's only while its revision is the
    collection's: any other write of the collection (a save of ids, a delete,
    another import) makes it a stranger's, whatever order the writes land in.
    So a refresh checks and saves in one atomic step of the store
    (``replace_if`` the revision it read): a save of ids or a delete landing
    while YouTube is read wins, and the refresh answers ``NotFromASource`` or
    ``CollectionNotFound``. After keeping a source, ``read`` and ``refresh``
    look at the collection once more and forget what they kept if it was
    written or deleted meanwhile (``forget_if`` that revision), so no source
    outlives its collection. A collection saved as a list of ids
    (``saved_as_ids``, called before such a save, or after a delete) keeps no
    source, so no refresh ever overwrites what a user typed in.

    Refreshes of one collection in this process share one read (``refresh_from``: whoever asks
    while it runs waits for it), and ``refresh`` (a user's) refuses, with ``RefreshTooSoon``, to
    read a source this process read (an import or a refresh) less than
    ``refresh_min_interval_s`` ago (``clock``: monotonic seconds); the refresher's own passes
    keep their interval and are not refused.
    """

    def __init__(
        self,
        store: CollectionStore,
        sources: CollectionSources,
        reader: SourceReader,
        log: EventLog,
        *,
        max_videos: int,
        refresh_min_interval_s: float,
        clock: Callable[[], float],
    ) -> None:
        self.sources = sources
        self._store = store
        self._reader = reader
        self._log = log
        self._max_videos = max_videos
        self._flights: SingleFlight[tuple[CollectionId, KeptSource], Result[Imported, ImportFailure]]
        self._flights = SingleFlight()
        self._recent: RecentReads[CollectionId] = RecentReads(refresh_min_interval_s, clock)

    async def read(
        self, collection_id: CollectionId, source: CollectionSource
    ) -> Result[Imported, ImportFailure]:
        """Save the collection as ``source`` holds it now, and keep ``source`` for refreshes."""
        before = await self._store.get(collection_id)
        if isinstance(before, Failure) and isinstance(before.failure(), StoreUnavailable):
            return Failure(before.failure())
        previous = before.unwrap().videos if isinstance(before, Success) else ()
        read = await self._reader.videos(source, self._max_videos)
        if not isinstance(read, Success):
            return Failure(read.failure())
        saved = await self._store.save(collection_id, read.unwrap())
        if not isinstance(saved, Success):
            return Failure(saved.failure())
        return await self._keep(collection_id, source, read.unwrap(), previous, saved.unwrap())

    async def refresh(self, collection_id: CollectionId) -> Result[Imported, ImportFailure]:
        """Read the stored collection's source again and save what it holds now."""
        kept = await self.sources.get(collection_id)
        if not isinstance(kept, Success):
            return Failure(kept.failure())
        found = kept.unwrap()
        if found is None:  # saved as ids, or no collection at all?
            exists = await self._store.get(collection_id)
            return Failure(exists.failure() if isinstance(exists, Failure) else NotFromASource(collection_id))
        wait_s = self._recent.wait_s(collection_id)
        if wait_s > 0 and not self._flights.running((collection_id, found)):  # joining one is free
            return Failure(RefreshTooSoon(collection_id, max(1, math.ceil(wait_s))))
        return await self.refresh_from(collection_id, found)

    async def refresh_from(
        self, collection_id: CollectionId, kept: KeptSource
    ) -> Result[Imported, ImportFailure]:
        """``refresh``, given what the caller has just read from ``sources`` (never refused for
        being soon; shared with the refreshes of it under way)."""
        return await self._flights.run((collection_id, kept), lambda: self._refresh(collection_id, kept))

    async def _refresh(
        self, collection_id: CollectionId, kept: KeptSource
    ) -> Result[Imported, ImportFailure]:
        before = await self._store.get(collection_id)
        if not isinstance(before, Success):
            return Failure(before.failure())
        collection = before.unwrap()
        if collection.revision != kept.revision:  # written since the source was kept: not its source
            await self.sources.forget_if(collection_id, kept.revision)  # a stranger's: tidied away
            return Failure(NotFromASource(collection_id))
        read = await self._reader.videos(kept.source, self._max_videos)
        if not isinstance(read, Success):
            return Failure(read.failure())
        videos = read.unwrap()
        saved = await self._store.replace_if(collection_id, videos, collection.revision)
        if not isinstance(saved, Success):  # a save of ids or a delete since the read wins
            lost = saved.failure()
            return Failure(NotFromASource(collection_id) if isinstance(lost, RevisionChanged) else lost)
        return await self._keep(collection_id, kept.source, videos, collection.videos, saved.unwrap())

    async def saved_as_ids(self, collection_id: CollectionId) -> Result[None, StoreUnavailable]:
        """Forget the collection's source: it is about to be saved as a list of ids (or was deleted)."""
        return await self.sources.put(collection_id, None)

    async def _keep(
        self,
        collection_id: CollectionId,
        source: CollectionSource,
        videos: tuple[VideoId, ...],
        previous: tuple[VideoId, ...],
        outcome: SaveOutcome,
    ) -> Result[Imported, ImportFailure]:
        """Keep ``source`` at the revision just saved; forget it again if that is already gone."""
        kept = await self.sources.put(collection_id, KeptSource(source, outcome.revision))
        if not isinstance(kept, Success):
            return Failure(kept.failure())
        self._recent.read(collection_id)
        now = await self._store.get(collection_id)  # a write or a delete may have landed since the save
        match now:
            case Success(Collection(revision=revision)) if revision == outcome.revision:
                pass
            case Success(_) | Failure(CollectionNotFound()):  # failing, it is left, never shown
                await self.sources.forget_if(collection_id, outcome.revision)
            case Failure(_):  # unanswered: left, never shown (the next refresh or write forgets it)
                pass
        now_ids, then = set(videos), set(previous)
        imported = Imported(videos, source, outcome, len(now_ids - then), len(then - now_ids))
        self._log.info(
            "collection.imported",
            collection=collection_id,
            kind=source.kind,
            source=source.id,
            videos=len(videos),
            added=imported.added,
            removed=imported.removed,
            created=isinstance(imported.outcome, Created),
        )
        return Success(imported)


@dataclass(slots=True)
class Refreshes:
    """What one pass of the refresher did."""

    refreshed: int = 0
    deferred: int = 0  # the quota budget was short: left for the next interval
    taken_elsewhere: int = 0  # claimed by another worker or host
    failed: int = 0  # the source, YouTube, the store or the sources did not answer


class SourceRefresher:
    """Reads every collection's source again once per ``interval_s`` (new uploads join).

    A pass (``take``) pages through the store's ids and, for each collection
    that has a source and whose refresh of the interval it claims
    (``CollectionSources.claim``: one worker or host per collection and
    interval), refreshes it through ``imports``, spending quota like a request
    (a unit a page). While ``short()`` (the quota budget runs ahead of the
    day) it claims and refreshes none: they wait for the next interval. At most
    ``concurrency`` at a time. ``run`` takes a pass at the start of every
    interval until cancelled; ``clock`` (wall seconds) and ``sleep`` are injected.
    """

    def __init__(
        self,
        store: CollectionStore,
        imports: CollectionImports,
        log: EventLog,
        *,
        interval_s: float,
        clock: Callable[[], float],
        short: Callable[[], bool],
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        concurrency: int = 2,
    ) -> None:
        self._store = store
        self._imports = imports
        self._log = log
        self._interval_s = interval_s
        self._clock = clock
        self._short = short
        self._sleep = sleep
        self._concurrency = concurrency

    async def run(self) -> None:
        await every_interval(self._interval_s, self._clock, self._sleep, self.take)

    async def take(self, slot: int) -> Refreshes:
        """One pass: the refresh of interval ``slot`` of every collection this process claims."""
        done = Refreshes()

        async def refresh(collection_id: CollectionId) -> None:
            await self._one(collection_id, slot, done)

        if not await every_collection(self._store, refresh, concurrency=self._concurrency):
            done.failed += 1
        self._log.info(
            "sources.refreshes",
            slot=slot,
            refreshed=done.refreshed,
            deferred=done.deferred,
            taken_elsewhere=done.taken_elsewhere,
            failed=done.failed,
        )
        return done

    async def _one(self, collection_id: CollectionId, slot: int, done: Refreshes) -> None:
        sources = self._imports.sources
        kept = await sources.get(collection_id)
        if not isinstance(kept, Success):
            done.failed += 1
            return
        source = kept.unwrap()
        if source is None:
            return
        if self._short():
            done.deferred += 1
            return
        claimed = await sources.claim(collection_id, slot)
        if not isinstance(claimed, Success):
            done.failed += 1
            return
        if not claimed.unwrap():
            done.taken_elsewhere += 1
            return
        refreshed = await self._imports.refresh_from(collection_id, source)
        if isinstance(refreshed, Success):
            done.refreshed += 1
        elif not isinstance(refreshed.failure(), CollectionNotFound | NotFromASource):  # changed meanwhile
            done.failed += 1
