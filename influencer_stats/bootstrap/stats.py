"""The ``cache`` slot: wrappers of the stats query (``CollectionStatsQuery``).

The base is always the use case itself (``logic.service.GetStats`` over the
store and the video source); these wrap it. Every write reaches them through
``InvalidatingStore``, which the root puts around the store whatever the
wrappers, so a new cache cannot miss an invalidation.

The core registers none: its default is ``none``, the use case alone. The stats caches
(``stats``, ``redis``, ``near``) are the ``stats_cache`` slice's (``bootstrap/slices/stats_cache.py``);
what the root asks of an entry it reads from its declarations (``per_process``, ``bumps_versions``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from influencer_stats.algebras import CollectionStatsQuery
from influencer_stats.bootstrap.registry import Registry
from influencer_stats.bootstrap.wiring import Wiring

StatsWrapper = Callable[[Wiring, CollectionStatsQuery], Awaitable[CollectionStatsQuery]]
STATS_WRAPPERS: Registry[StatsWrapper] = Registry("cache")
