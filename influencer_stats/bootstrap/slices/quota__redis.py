"""Joint ``quota__redis``: the day's quota counted in Redis (``--quota redis``), one count for every worker and host.

The ``quota`` slice's and the ``redis`` slice's only together (``slice.Joint``): loaded while
both are installed, removed with either. Its entry builds the quota slice's ``CountedQuota`` with
a ledger in the shared Redis (valid on a Cluster), recounted from what the processes saw when
Redis loses it (each reads it again every ``RECOUNT_NOTE_S``, a background task of the process).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Final

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
        "tests/integration/test_quota_redis_recount.py",
    ),
    modules=(
        "influencer_stats.interpreters.quota.quota_redis",
        "influencer_stats.bootstrap.slices.quota__redis",
    ),
)


#: How often each process reads the day's count again while it spends nothing (re-seeding it with
#: the highest count it saw if Redis lost it): one script call a second per process.
RECOUNT_NOTE_S: Final = 1.0
#: How long a re-seeded count spends nothing, so that every live process (each noting within
#: ``RECOUNT_NOTE_S``) brings the count it saw first: an unknown count is taken as spent.
RECOUNT_HOLD_S: Final = 3.0


@QUOTAS.add(
    "redis",
    "units spent today, one count in Redis for every worker and host",
    ready=("redis",),
    needs=("redis",),
    shared=True,  # one count for every worker (the memory ledger's refusal names it)
)
async def _redis(resources: Resources) -> Quota:
    return counted(resources.settings, _ledger)


async def _ledger(wiring: Wiring) -> QuotaLedger:
    from influencer_stats.interpreters.quota.quota_redis import RedisQuotaLedger

    client = await redis(wiring)
    # Wall time: the count's expiry is a Unix time, its day a Pacific calendar day.
    ledger = RedisQuotaLedger(client, redis_keys(wiring).quota, wiring.log, time.time, RECOUNT_HOLD_S)
    wiring.background(ledger.watch(RECOUNT_NOTE_S), "quota:recount")
    return ledger
