"""A pass over every stored collection: what the background tasks (snapshots, refreshes) share."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from returns.result import Success

from influencer_stats.algebras import CollectionStore
from influencer_stats.domain.models import CollectionId


async def every_collection(
    store: CollectionStore,
    visit: Callable[[CollectionId], Awaitable[None]],
    *,
    concurrency: int,
    page: int = 500,
) -> bool:
    """``visit`` each id ``store`` holds, a page of ``page`` ids at a time (keyset paging: each
    id stored throughout is visited once), at most ``concurrency`` at once; ``False`` when the
    store failed to list a page (the pass ended there)."""
    gate = asyncio.Semaphore(concurrency)

    async def gated(collection_id: CollectionId) -> None:
        async with gate:
            await visit(collection_id)

    after = None
    while True:
        ids = await store.ids(after, page)
        if not isinstance(ids, Success):
            return False
        listed = ids.unwrap()
        await asyncio.gather(*(gated(collection_id) for collection_id in listed))
        if len(listed) < page:
            return True
        after = listed[-1]
