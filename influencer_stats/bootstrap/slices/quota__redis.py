"""Joint ``quota__redis``: the day's quota counted in Redis (``--quota redis``), one count for every worker and host.

The ``quota`` slice's and the ``redis`` slice's only together (``slice.Joint``): loaded while
both are installed, removed with either. Its entry builds the quota slice's ``CountedQuota`` with
a ledger in the shared Redis (valid on a Cluster).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from influencer_stats.bootstrap.quota import QUOTAS, Quota
from influencer_stats.bootstrap.slices.quota import counted
from influencer_stats.bootstrap.slices.redis import redis, redis_keys
from influencer_stats.bootstrap.slices.slice import Joint
from influencer_stats.bootstrap.wiring import Resources, Wiring

if TYPE_CHECKING:
    from influencer_stats.algebras.quota import QuotaLedger

JOINT = Joint(
    ("quota", "redis"),
    "the day's quota counted in Redis (--quota redis), one count for every worker and host",
    files=(
        "influencer_stats/interpreters/quota/quota_redis.py",
        "tests/integration/test_redis_cluster_quota.py",
        "tests/unit/test_quota_redis_config.py",
        "tests/integration/test_quota_redis.py",
    ),
    modules=(
        "influencer_stats.interpreters.quota.quota_redis",
        "influencer_stats.bootstrap.slices.quota__redis",
    ),
)


@QUOTAS.add(
    "redis",
    "units spent today, one count in Redis for every worker and host",
    ready=("redis",),
    needs=("redis",),
)
async def _redis(resources: Resources) -> Quota:
    return counted(resources.settings, _ledger)


async def _ledger(wiring: Wiring) -> QuotaLedger:
    from influencer_stats.interpreters.quota.quota_redis import RedisQuotaLedger

    return RedisQuotaLedger(await redis(wiring), redis_keys(wiring).quota, wiring.log)
