"""The quota ledger in Redis: one count per quota day for every worker and host."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from returns.result import Failure, Result, Success

from influencer_stats.algebras import EventLog
from influencer_stats.algebras.quota import Refusal
from influencer_stats.interpreters.redis_faults import REDIS_FAULTS
from influencer_stats.interpreters.redis_topology import RedisClient

#: Take one unit unless the budget is spent; the first unit of a day sets the key's expiry.
_TAKE: Final = """
local spent = tonumber(redis.call('GET', KEYS[1]) or '0')
if spent >= tonumber(ARGV[1]) then return -1 end
spent = redis.call('INCR', KEYS[1])
if spent == 1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return spent
"""


class RedisQuotaLedger:
    """``QuotaLedger`` in Redis: a Lua script checks and counts in one atomic step.

    N workers on M hosts share one count per day (``RedisKeys.quota``), so they
    spend one budget between them, never N. The key expires an hour after its
    day ends. Redis failing is ``"unreachable"`` (logged as a warning): the
    governor then makes no call, because one it did not count could exceed
    the budget.
    """

    def __init__(self, client: RedisClient, key: Callable[[str], str], log: EventLog) -> None:
        self._take = client.register_script(_TAKE)
        self._key = key
        self._log = log

    async def take(self, day: str, budget: int, keep_s: int) -> Result[int, Refusal]:
        try:
            spent = int(await self._take(keys=[self._key(day)], args=[budget, keep_s]))
        except REDIS_FAULTS as exc:
            self._log.warning("quota.ledger_unavailable", error=type(exc).__name__)
            return Failure("unreachable")
        return Failure("spent") if spent < 0 else Success(spent)
