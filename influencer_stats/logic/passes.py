"""What the background tasks (snapshots, refreshes) share: a pass over every stored collection,
taken once per interval."""

from __future__ import annotations

import asyncio
import math
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


async def every_interval(
    interval_s: float,
    clock: Callable[[], float],
    sleep: Callable[[float], Awaitable[None]],
    take: Callable[[int], Awaitable[object]],
) -> None:
    """``take(slot)`` at once, then at the start of every interval of ``interval_s`` (``slot``
    counts intervals of the wall ``clock``), until cancelled."""
    slot = math.floor(clock() / interval_s)
    while True:
        await take(slot)
        # Each interval once: a sleep that ends early retakes none, a pass that overran skips ahead.
        slot = max(slot + 1, math.floor(clock() / interval_s))
        await sleep(max(0.0, slot * interval_s - clock()))
