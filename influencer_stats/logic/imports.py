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
    CollectionId,
    CollectionNotFound,
    CollectionSource,
    Created,
    ImportFailure,
    NotFromASource,
    RefreshTooSoon,
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
    keeps the source in ``sources`` (a failure there answers
    ``StoreUnavailable``: the write is not acknowledged, and repeating it
    mends it). ``refresh`` reads a stored collection's source again: new
    uploads join, videos gone from the list leave. A collection saved as a
    list of ids (``saved_as_ids``, called before such a save) keeps no source,
    so no refresh ever overwrites what a user typed in.

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
        self._flights: SingleFlight[tuple[CollectionId, CollectionSource], Result[Imported, ImportFailure]]
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
        return await self._save(collection_id, source, previous)

    async def refresh(self, collection_id: CollectionId) -> Result[Imported, ImportFailure]:
        """Read the stored collection's source again and save what it holds now."""
        kept = await self._kept(collection_id)
        if not isinstance(kept, Success):
            if isinstance(kept.failure(), NotFromASource):  # saved as ids, or no collection at all?
                exists = await self._store.get(collection_id)
                if not isinstance(exists, Success):
                    return Failure(exists.failure())
            return Failure(kept.failure())
        source = kept.unwrap()
        wait_s = self._recent.wait_s(collection_id)
        if wait_s > 0 and not self._flights.running((collection_id, source)):  # joining one is free
            return Failure(RefreshTooSoon(collection_id, max(1, math.ceil(wait_s))))
        return await self.refresh_from(collection_id, source)

    async def refresh_from(
        self, collection_id: CollectionId, source: CollectionSource
    ) -> Result[Imported, ImportFailure]:
        """``refresh``, given the source the caller has just read from ``sources`` (never refused
        for being soon; shared with the refreshes of it under way)."""
        return await self._flights.run((collection_id, source), lambda: self._refresh(collection_id, source))

    async def _refresh(
        self, collection_id: CollectionId, source: CollectionSource
    ) -> Result[Imported, ImportFailure]:
        before = await self._store.get(collection_id)
        if not isinstance(before, Success):
            return Failure(before.failure())
        return await self._save(collection_id, source, before.unwrap().videos, refreshing=True)

    async def saved_as_ids(self, collection_id: CollectionId) -> Result[None, StoreUnavailable]:
        """Forget the collection's source: it is about to be saved as a list of ids (or deleted)."""
        return await self.sources.put(collection_id, None)

    async def _kept(self, collection_id: CollectionId) -> Result[CollectionSource, ImportFailure]:
        """The source the collection keeps; ``NotFromASource`` when it keeps none."""
        kept = await self.sources.get(collection_id)
        if not isinstance(kept, Success):
            return Failure(kept.failure())
        source = kept.unwrap()
        return Failure(NotFromASource(collection_id)) if source is None else Success(source)

    async def _save(
        self,
        collection_id: CollectionId,
        source: CollectionSource,
        previous: tuple[VideoId, ...],
        *,
        refreshing: bool = False,
    ) -> Result[Imported, ImportFailure]:
        read = await self._reader.videos(source, self._max_videos)
        if not isinstance(read, Success):
            return Failure(read.failure())
        videos = read.unwrap()
        if refreshing:  # a save of ids while YouTube was read forgot the source: it wins
            still = await self._kept(collection_id)
            if not isinstance(still, Success) or still.unwrap() != source:
                return Failure(
                    still.failure() if isinstance(still, Failure) else NotFromASource(collection_id)
                )
        saved = await self._store.save(collection_id, videos)
        if not isinstance(saved, Success):
            return Failure(saved.failure())
        if refreshing and isinstance(saved.unwrap(), Created):  # deleted since the check: undo
            await self._store.delete(collection_id)
            return Failure(CollectionNotFound(collection_id))
        kept = await self.sources.put(collection_id, source)
        if not isinstance(kept, Success):
            return Failure(kept.failure())
        self._recent.read(collection_id)
        now, then = set(videos), set(previous)
        imported = Imported(videos, source, saved.unwrap(), len(now - then), len(then - now))
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
