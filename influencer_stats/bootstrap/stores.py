"""The ``store`` slot: where collections live."""

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


@STORES.add(
    "redis",
    "shared by every worker and host (REDIS_URL)",
    ready=("redis",),
    needs=("redis",),
    shared=True,
    bumps_versions=True,
)
async def _redis(wiring: Wiring) -> CollectionStore:
    from influencer_stats.interpreters.collections.redis_store import RedisCollectionStore

    settings = wiring.settings
    store = RedisCollectionStore(
        await wiring.redis(),
        wiring.redis_keys(),
        wait_replicas=settings.redis_wait_replicas,
        wait_ms=max(
            1, round(1000 * settings.redis_timeout_s / 2)
        ),  # WAIT ends well before the call's timeout
    )
    if settings.redis_wait_replicas:  # a check the setting adds (not declared: none by default)
        wiring.checks["redis-replicas"] = store.replicated
    return store
