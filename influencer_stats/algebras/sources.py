"""Collections read from YouTube: a playlist's or a channel's videos, and where each collection came from."""

from __future__ import annotations

from typing import Protocol

from returns.result import Result

from influencer_stats.domain.models import (
    CollectionId,
    CollectionSource,
    KeptSource,
    ReadError,
    Revision,
    StoreUnavailable,
    VideoId,
)


class SourceReader(Protocol):
    """The video ids a playlist holds, or a channel has uploaded, as YouTube lists them now.

    Contract (checked by ``tests/contract/test_source_reader.py``):

    - ``videos(source, limit)`` is every video of ``source`` a viewer can watch
      (private and deleted ones are left out), in the playlist's order,
      duplicates kept; a channel's are its uploads playlist's.
    - More than ``limit`` videos is ``SourceTooLarge``, decided as early as
      YouTube's count allows (one page read, not all of them); an unknown or
      unreadable playlist or channel is ``SourceNotFound``.
    - A call to YouTube is spent from the quota budget like a ``videos.list``
      call (one unit a page of 50, one for a channel's uploads playlist); a
      YouTube failure is the ``UpstreamError`` the stats would answer for it
      (timeouts, 5xx, malformed answers, quota). Never raises for them.
    """

    async def videos(
        self, source: CollectionSource, limit: int
    ) -> Result[tuple[VideoId, ...], ReadError]: ...


class CollectionSources(Protocol):
    """Where each collection read from YouTube came from, kept beside the collections.

    Contract (checked by ``tests/contract/test_collection_sources.py``):

    - ``put(collection_id, kept)`` keeps ``kept`` (a source and the collection's
      revision it was saved at) for the collection, replacing any;
      ``put(collection_id, None)`` forgets it (and its claim). ``get`` returns
      what was last put (``None``: none, not an error). ``forget_if(collection_id,
      revision)`` forgets it (and its claim) only if it was kept at ``revision``,
      atomically with that check.
    - It knows nothing of the collections: whether a kept source is still the
      collection's (its revision the collection's) is its reader's question.
    - ``claim(collection_id, slot)`` is ``Success(True)`` for the first caller to
      claim re-reading the collection's source in interval ``slot`` (a whole
      number counting intervals), ``Success(False)`` for every later one and for
      an earlier slot than one claimed: with several workers or hosts, one
      refresh per collection per interval. A collection with no source kept is
      never claimed (``Success(False)``, checked atomically with the claim), so
      no claim outlives its source.
    - A backend that cannot be reached is ``Failure(StoreUnavailable)``, never
      raised. Safe for concurrent tasks; what one ``put`` wrote is seen by every
      later ``get``, in any process sharing the backend.
    """

    async def get(self, collection_id: CollectionId) -> Result[KeptSource | None, StoreUnavailable]: ...

    async def put(
        self, collection_id: CollectionId, kept: KeptSource | None
    ) -> Result[None, StoreUnavailable]: ...

    async def forget_if(
        self, collection_id: CollectionId, revision: Revision
    ) -> Result[None, StoreUnavailable]: ...

    async def claim(self, collection_id: CollectionId, slot: int) -> Result[bool, StoreUnavailable]: ...
