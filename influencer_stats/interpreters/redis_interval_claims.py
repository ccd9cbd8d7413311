"""Claims of one interval's work per collection in Redis (``interval_claims`` says what a claim is):
one key per collection, set by one script, so valid on a Cluster."""

from __future__ import annotations

from returns.result import Failure, Result, Success

from influencer_stats.domain.models import StoreUnavailable
from influencer_stats.interpreters.redis_faults import REDIS_FAULTS, store_unavailable
from influencer_stats.interpreters.redis_topology import RedisClient

#: KEYS[1] the collection's claim, KEYS[2] (optional) a key that must exist; ARGV: the slot, expiry
#: (ms). 1 when the slot is later than the one claimed (then it is claimed), else 0.
_CLAIM = """
if KEYS[2] and redis.call('EXISTS', KEYS[2]) == 0 then
    return 0
end
local claimed = tonumber(redis.call('GET', KEYS[1]) or '-1')
if claimed >= tonumber(ARGV[1]) then
    return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""


async def claim_in_redis(
    client: RedisClient, key: str, slot: int, expiry_ms: int, *, while_exists: str | None = None
) -> Result[bool, StoreUnavailable]:
    """Claim ``slot`` at ``key``, which expires ``expiry_ms`` after the claim; a fault is
    ``StoreUnavailable``. With ``while_exists`` (a key in ``key``'s slot), nothing is claimed while
    that key is missing, in the same script: no claim is set for work deleted meanwhile."""
    keys = [key] if while_exists is None else [key, while_exists]
    try:
        claimed = await client.eval(_CLAIM, len(keys), *keys, slot, expiry_ms)
    except REDIS_FAULTS as exc:
        return Failure(store_unavailable(exc))
    return Success(claimed == 1)
