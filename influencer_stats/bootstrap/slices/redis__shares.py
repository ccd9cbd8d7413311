"""Joint ``redis__shares``: each client's share counted in Redis (``--shares redis``), one count
for every worker and host.

The ``shares`` slice's and the ``redis`` slice's only together (``slice.Joint``): loaded while both
are installed, removed with either. ``limits``' Redis storage on the shared client's connections
(one counter key a client a window, under ``INFLUENCER_STATS_REDIS_PREFIX``): valid on
a Cluster too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from influencer_stats.bootstrap.slices.redis import redis
from influencer_stats.bootstrap.slices.shares import SHARES, client_shares, valid_share
from influencer_stats.bootstrap.slices.slice import Joint
from influencer_stats.bootstrap.wiring import Wiring

if TYPE_CHECKING:
    from influencer_stats.interpreters.shares.shares import ClientShares

JOINT = Joint(
    ("redis", "shares"),
    "each client's share counted in Redis (--shares redis), one count for every worker and host",
    files=("tests/integration/test_shares_redis.py",),
    modules=("influencer_stats.bootstrap.slices.redis__shares",),
)


@SHARES.add(
    "redis",
    "each client's units counted in Redis, one count for every worker and host",
    check=valid_share,
    ready=("redis",),
    needs=("redis",),
)
async def _redis(wiring: Wiring) -> ClientShares | None:
    from limits.aio.storage import RedisStorage

    client = await redis(wiring)
    storage = RedisStorage(
        "async+redis://",
        implementation="redispy",
        key_prefix=f"{wiring.settings.redis_prefix}:shares",
        wrap_exceptions=True,
    )
    # Counted on the shared client (one server, Sentinel's primary, or a Cluster: a window is one
    # key), with its pool, timeouts and spans, not on a client of limits' own (never connected).
    bridge: Any = storage.bridge
    bridge.storage = client
    bridge.connection_getter = lambda _readonly: client
    bridge.register_scripts()
    return client_shares(wiring, storage)
