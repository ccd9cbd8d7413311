"""The ``sources`` slot: where each collection read from a playlist or a channel keeps its source
(so a refresh reads it again), and the claims that make it one refresh an interval."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from influencer_stats.algebras.sources import CollectionSources
from influencer_stats.bootstrap.registry import Registry
from influencer_stats.bootstrap.wiring import Wiring
from influencer_stats.domain.models import DAY_S

SourcesBuilder = Callable[[Wiring], Awaitable[CollectionSources]]
SOURCES: Registry[SourcesBuilder] = Registry("sources")
#: The most collections the in-process sources keep a claim of (a few dozen bytes each); the
#: sources themselves are never dropped (one per collection, which the store bounds).
MEMORY_CLAIMS = 10_000
#: How long a claim is kept in Redis after it was taken: far longer than any refresh interval
#: (a claim gone may be taken again in its slot), short enough that none accumulates.
CLAIM_KEEP_S = 30 * DAY_S


@SOURCES.add(
    "memory",
    "in process memory, one process, gone at exit",
    per_process=("collection sources", "--sources sqlite or redis"),
)
async def _memory(_: Wiring) -> CollectionSources:
    from influencer_stats.interpreters.sources.memory import MemoryCollectionSources

    return MemoryCollectionSources(MEMORY_CLAIMS)


@SOURCES.add(
    "sqlite",
    "a table in the SQLite database (INFLUENCER_STATS_DB), durable",
    paths=("db_path",),
    ready=("sqlite",),
)
async def _sqlite(wiring: Wiring) -> CollectionSources:
    from influencer_stats.interpreters.sources.sqlite import SqliteCollectionSources

    return await SqliteCollectionSources.create(await wiring.sqlite())


@SOURCES.add("redis", "shared by every worker and host (REDIS_URL)", ready=("redis",), needs=("redis",))
async def _redis(wiring: Wiring) -> CollectionSources:
    from influencer_stats.interpreters.sources.redis import RedisCollectionSources

    return RedisCollectionSources(await wiring.redis(), wiring.redis_keys(), CLAIM_KEEP_S)
