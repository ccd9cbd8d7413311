"""The ``store`` slot: where collections live (``sqlite`` and ``redis`` are their slices')."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from influencer_stats.algebras import CollectionStore
from influencer_stats.bootstrap.registry import Registry
from influencer_stats.bootstrap.wiring import Wiring

StoreBuilder = Callable[[Wiring], Awaitable[CollectionStore]]
STORES: Registry[StoreBuilder] = Registry("store")
#: A worker would never see what another stored: use a store registered that keeps nothing per
#: process (``Slot.instead``: whichever are installed).
_IN_MEMORY = ("collections", "")


@STORES.add(
    "list",
    "in memory, one process, a linear scan logging each probe (the talk's v1)",
    per_process=_IN_MEMORY,
)
async def _list(wiring: Wiring) -> CollectionStore:
    from influencer_stats.interpreters.collections.memory_list import ListCollectionStore

    return ListCollectionStore(wiring.log)


@STORES.add("dict", "in memory, one process, O(1)", per_process=_IN_MEMORY)
async def _dict(_: Wiring) -> CollectionStore:
    from influencer_stats.interpreters.collections.memory_dict import DictCollectionStore

    return DictCollectionStore()
