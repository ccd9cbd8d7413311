"""Collection storage."""

from __future__ import annotations

from typing import Protocol

from returns.result import Result

from influencer_stats.domain.models import (
    Collection,
    CollectionId,
    CollectionNotFound,
    Replaced,
    Revision,
    RevisionChanged,
    SaveOutcome,
    StoreUnavailable,
    VideoId,
)


class CollectionStore(Protocol):
    """Named collections of video ids.

    One Protocol rather than the original's view/update/all-ids split: every
    interpreter we have implements all of them, and the HTTP edge needs them.

    Contract (checked by ``tests/contract/test_collection_store.py``):

    - ``save`` creates or replaces atomically and reports which; once it
      returns ``Success`` the write is visible to every later ``get``.
    - Every collection carries a ``revision`` (``get`` returns it; ``save``'s
      outcome and ``replace_if``'s carry the new one): an opaque token, new on
      every write, never repeated for an id, a delete and re-creation included.
    - ``replace_if(id, videos, revision)`` replaces the videos only if the
      stored revision is still ``revision``, atomically with that check
      (optimistic concurrency: read, work, write back unless someone wrote in
      between): ``RevisionChanged`` when it is not, ``CollectionNotFound``
      when there is no collection (it never creates one).
    - ``get`` returns the videos in the order they were saved, duplicates kept.
    - ``delete`` of an unknown id is ``Failure(CollectionNotFound)``.
    - ``ids(after, limit)`` is one page of the stored ids in ascending order
      (code points; ids are ASCII, so bytes too): the first ``limit`` (>= 1)
      ids greater than ``after``, from the smallest when ``after`` is None.
      Fewer than ``limit`` only when no more follow, so a short page is the
      last. Passing each page's last id as the next ``after`` (keyset paging)
      lists every id stored throughout exactly once, in order, whatever is
      written between pages. A page costs O(log n + limit), not O(n)
      (except in the deliberately linear v1 ``list`` store).
    - A store that cannot reach its backend returns ``Failure(StoreUnavailable)``
      and never raises for it. Methods are safe to call from concurrent tasks.
    """

    async def get(
        self, collection_id: CollectionId
    ) -> Result[Collection, CollectionNotFound | StoreUnavailable]: ...

    async def save(
        self, collection_id: CollectionId, videos: tuple[VideoId, ...]
    ) -> Result[SaveOutcome, StoreUnavailable]: ...

    async def replace_if(
        self, collection_id: CollectionId, videos: tuple[VideoId, ...], revision: Revision
    ) -> Result[Replaced, CollectionNotFound | RevisionChanged | StoreUnavailable]: ...

    async def delete(
        self, collection_id: CollectionId
    ) -> Result[None, CollectionNotFound | StoreUnavailable]: ...

    async def ids(
        self, after: CollectionId | None, limit: int
    ) -> Result[tuple[CollectionId, ...], StoreUnavailable]: ...
