"""In-memory store keyed by id."""

from __future__ import annotations

from returns.result import Failure, Result, Success

from influencer_stats.logic.models import (
    Collection,
    CollectionId,
    CollectionNotFound,
    Created,
    Replaced,
    SaveOutcome,
    StoreUnavailable,
    VideoId,
)

_CREATED = Success(Created())
_REPLACED = Success(Replaced())


class DictCollectionStore:
    """In-memory ``CollectionStore`` backed by a dict: O(1) per operation.

    Not durable; one process only (each worker process has its own). No
    ``await`` inside a read-modify-write, so concurrent tasks are safe.
    """

    def __init__(self) -> None:
        self._entries: dict[CollectionId, Collection] = {}

    async def get(
        self, collection_id: CollectionId
    ) -> Result[Collection, CollectionNotFound | StoreUnavailable]:
        entry = self._entries.get(collection_id)
        if entry is None:
            return Failure(CollectionNotFound(collection_id))
        return Success(entry)

    async def save(
        self, collection_id: CollectionId, videos: tuple[VideoId, ...]
    ) -> Result[SaveOutcome, StoreUnavailable]:
        existed = collection_id in self._entries
        self._entries[collection_id] = Collection(collection_id, videos)
        return _REPLACED if existed else _CREATED

    async def delete(
        self, collection_id: CollectionId
    ) -> Result[None, CollectionNotFound | StoreUnavailable]:
        if self._entries.pop(collection_id, None) is None:
            return Failure(CollectionNotFound(collection_id))
        return Success(None)

    async def ids(self) -> Result[tuple[CollectionId, ...], StoreUnavailable]:
        return Success(tuple(sorted(self._entries)))
