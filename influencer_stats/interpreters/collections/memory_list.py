"""The talk's v1 store: a list of entries, scanned linearly, logging each probe."""

from __future__ import annotations

from bisect import bisect_right

from returns.result import Failure, Result, Success

from influencer_stats.algebras import EventLog
from influencer_stats.domain.models import (
    Collection,
    CollectionId,
    CollectionNotFound,
    Created,
    Replaced,
    Revision,
    RevisionChanged,
    SaveOutcome,
    StoreUnavailable,
    VideoId,
    new_revision,
)


class ListCollectionStore:
    """In-memory ``CollectionStore`` kept as a list: O(n) per lookup.

    Deliberately slow, like the original's linked list, so the perf lab has a
    baseline: every lookup walks the entries and logs one debug event per
    entry it probes. Not durable; one process only. Methods have no ``await``
    inside their read-modify-write, so concurrent tasks cannot interleave.
    """

    def __init__(self, log: EventLog) -> None:
        self._entries: list[Collection] = []
        self._log = log

    def _index(self, collection_id: CollectionId) -> int | None:
        for index, entry in enumerate(self._entries):
            self._log.debug("store.probe", index=index, entry=entry.id, wanted=collection_id)
            if entry.id == collection_id:
                return index
        return None

    async def get(
        self, collection_id: CollectionId
    ) -> Result[Collection, CollectionNotFound | StoreUnavailable]:
        index = self._index(collection_id)
        if index is None:
            return Failure(CollectionNotFound(collection_id))
        return Success(self._entries[index])

    async def save(
        self, collection_id: CollectionId, videos: tuple[VideoId, ...]
    ) -> Result[SaveOutcome, StoreUnavailable]:
        entry = Collection(collection_id, videos, new_revision())
        index = self._index(collection_id)
        if index is None:
            self._entries.append(entry)
            return Success(Created(entry.revision))
        self._entries[index] = entry
        return Success(Replaced(entry.revision))

    async def replace_if(
        self, collection_id: CollectionId, videos: tuple[VideoId, ...], revision: Revision
    ) -> Result[Replaced, CollectionNotFound | RevisionChanged | StoreUnavailable]:
        index = self._index(collection_id)  # no await from here to the write
        if index is None:
            return Failure(CollectionNotFound(collection_id))
        if self._entries[index].revision != revision:
            return Failure(RevisionChanged(collection_id))
        entry = Collection(collection_id, videos, new_revision())
        self._entries[index] = entry
        return Success(Replaced(entry.revision))

    async def delete(
        self, collection_id: CollectionId
    ) -> Result[None, CollectionNotFound | StoreUnavailable]:
        index = self._index(collection_id)
        if index is None:
            return Failure(CollectionNotFound(collection_id))
        del self._entries[index]
        return Success(None)

    async def ids(
        self, after: CollectionId | None, limit: int
    ) -> Result[tuple[CollectionId, ...], StoreUnavailable]:
        ordered = sorted(entry.id for entry in self._entries)  # O(n log n) a page: it is v1
        start = 0 if after is None else bisect_right(ordered, after)
        return Success(tuple(ordered[start : start + limit]))
