"""Joint ``redis__shares``: each client's share counted in Redis (``--shares redis``), one count
for every worker and host.

The ``shares`` slice's and the ``redis`` slice's only together (``slice.Joint``): loaded while both
are installed, removed with either. ``limits``' Redis storage on the shared client's connections
(one counter key a client a window, under ``INFLUENCER_STATS_REDIS_PREFIX``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from influencer_stats.bootstrap.slices.redis import redis
from influencer_stats.bootstrap.slices.shares import SHARES, client_shares, valid_share
from influencer_stats.bootstrap.slices.slice import Joint
from influencer_stats.bootstrap.wiring import Wiring

if TYPE_CHECKING:
    from influencer_stats.interpreters.shares.shares import ClientShares
    from influencer_stats.settings import Settings

JOINT = Joint(
    ("redis", "shares"),
    "each client's share counted in Redis (--shares redis), one count for every worker and host",
    files=("tests/integration/test_shares_redis.py",),
    modules=("influencer_stats.bootstrap.slices.redis__shares",),
)


def _one_server(settings: Settings) -> str | None:
    if settings.redis_cluster:
        return "--shares redis counts on one Redis server or a Sentinel-watched primary, not a Cluster"
    return valid_share(settings)


@SHARES.add(
    "redis",
    "each client's units counted in Redis, one count for every worker and host",
    check=_one_server,
    ready=("redis",),
    needs=("redis",),
)
async def _redis(wiring: Wiring) -> ClientShares | None:
    from limits.aio.storage import RedisStorage

    client = await redis(wiring)
    # The shared client's connections: one server, or a Sentinel-watched primary (no Cluster).
    pool: dict[str, Any] = {"connection_pool": getattr(client, "connection_pool", None)}
    storage = RedisStorage(
        "async+redis://",
        implementation="redispy",
        key_prefix=f"{wiring.settings.redis_prefix}:shares",
        wrap_exceptions=True,
        **pool,
    )
    return client_shares(wiring, storage)
