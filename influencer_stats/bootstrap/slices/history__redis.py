"""Joint ``history__redis``: the stats history in Redis (``--history redis``), for every worker and host.

The ``history`` slice's and the ``redis`` slice's only together (``slice.Joint``): loaded while
both are installed, removed with either. Its entry keeps each collection's snapshots in a sorted
set of the shared Redis (valid on a Cluster); the history's own slot then follows a Redis store
by default (``same_as="store"``).
"""

from __future__ import annotations

from influencer_stats.algebras.history import StatsHistory
from influencer_stats.bootstrap.slices.history import HISTORIES, retention
from influencer_stats.bootstrap.slices.redis import redis, redis_keys
from influencer_stats.bootstrap.slices.slice import Joint
from influencer_stats.bootstrap.wiring import Wiring

JOINT = Joint(
    ("history", "redis"),
    "the stats history in Redis (--history redis), for every worker and host",
    files=(
        "influencer_stats/interpreters/history/redis.py",
        "perf/history_bytes_redis.py",  # its measure in the lab of the history's size
        "tests/integration/test_history_redis.py",
    ),
    modules=(
        "influencer_stats.interpreters.history.redis",
        "influencer_stats.bootstrap.slices.history__redis",
        "perf.history_bytes_redis",
    ),
)


@HISTORIES.add("redis", "shared by every worker and host (REDIS_URL)", ready=("redis",), needs=("redis",))
async def _redis(wiring: Wiring) -> StatsHistory:
    from influencer_stats.interpreters.history.redis import RedisStatsHistory

    return RedisStatsHistory(await redis(wiring), redis_keys(wiring), retention(wiring))
