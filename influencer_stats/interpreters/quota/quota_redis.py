"""The quota ledger in Redis: one count per quota day for every worker and host, recounted from
what the processes saw when Redis loses it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Final

from returns.result import Failure, Result, Success

from influencer_stats.algebras import EventLog
from influencer_stats.algebras.quota import Refusal
from influencer_stats.interpreters.redis_faults import REDIS_FAULTS
from influencer_stats.interpreters.redis_topology import RedisClient

#: The day's count is a hash: ``n`` units spent, ``inc`` the name of this count (a new one each
#: time the key is created), ``base`` what a lost count was re-seeded with, ``hold`` until when
#: (Redis's ms) nothing is spent while the processes that saw a lost count re-seed it. ARGV:
#: budget (0: only re-seed and read), expiry (Unix s), the highest count this process saw today
#: and the name of the count it saw it in, a name for a count created now, the hold (ms).
#: Answers ``{n, inc, outcome}``: 1 spent one, 0 read only, -1 the budget is spent, -2 held.
_TAKE: Final = """
local key, budget, floor = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[3])
if redis.call('TYPE', key).ok == 'string' then
  local old = tonumber(redis.call('GET', key)) or 0
  redis.call('DEL', key)
  redis.call('HSET', key, 'n', old, 'base', old, 'inc', ARGV[5], 'hold', 0)
  redis.call('EXPIREAT', key, ARGV[2])
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local got = redis.call('HMGET', key, 'n', 'inc', 'base', 'hold')
local n, inc, base, hold = tonumber(got[1]), got[2], tonumber(got[3]), tonumber(got[4])
local lost = false
if not inc then
  n, inc, base, hold, lost = floor, ARGV[5], floor, 0, floor > 0
  redis.call('HSET', key, 'n', n, 'inc', inc, 'base', base, 'hold', 0)
  redis.call('EXPIREAT', key, ARGV[2])
elseif inc == ARGV[4] then
  if n < floor then
    n, lost = floor, true
    redis.call('HSET', key, 'n', n)
  end
elseif floor > base then
  n, base, lost = n + floor - base, floor, true
  redis.call('HSET', key, 'n', n, 'base', base)
end
if lost and now + tonumber(ARGV[6]) > hold then
  hold = now + tonumber(ARGV[6])
  redis.call('HSET', key, 'hold', hold)
end
if budget == 0 then return {n, inc, 0} end
if now < hold then return {n, inc, -2} end
if n >= budget then return {n, inc, -1} end
return {redis.call('HINCRBY', key, 'n', 1), inc, 1}
"""
#: The script's outcome while a re-seeded count is held.
_HELD: Final = -2


class RedisQuotaLedger:
    """``QuotaLedger`` in Redis: a Lua script checks and counts in one atomic step.

    N workers on M hosts share one count per day (``RedisKeys.quota``), so they
    spend one budget between them, never N. The key expires an hour after its
    day ends. Redis failing is ``"unreachable"`` (logged as a warning): the
    governor then makes no call, because one it did not count could exceed
    the budget.

    Redis losing the count (a restart without persistence, a failover to a
    replica behind, an eviction) must not let the day's budget be spent twice.
    Each process keeps the highest count it saw today (every take answers it;
    ``watch`` reads it again every ``every_s`` while the process is idle) and
    sends it with each take: a count missing or below it is re-seeded with it
    (a count created since, by a process that knew nothing, gets it on top of
    what it counted: ``base``), and a re-seed holds all spending for
    ``hold_s`` (``"recounting"``), long enough for every live process to bring
    what it saw. The process that made the last call before the loss saw the
    exact count, so the recount is exact while it lives; what is lost is only
    what no live process saw (every process restarted with Redis).
    """

    def __init__(
        self,
        client: RedisClient,
        key: Callable[[str], str],
        log: EventLog,
        clock: Callable[[], float],
        hold_s: float,
    ) -> None:
        self._take = client.register_script(_TAKE)
        self._key = key
        self._log = log
        self._clock = clock
        self._hold_ms = max(0, round(hold_s * 1000))
        self._name = uuid.uuid4().hex  # the names of the counts this process creates ...
        self._asked = 0  # ... one per ask, so that no count lost is ever taken for a new one
        self._day = ""
        self._floor = 0
        self._count = ""  # the name of the count ``_floor`` was seen in
        self._expire_at = 0

    async def take(self, day: str, budget: int, keep_s: int) -> Result[int, Refusal]:
        if day != self._day:
            self._day, self._floor, self._count = day, 0, ""
        self._expire_at = int(self._clock()) + keep_s
        try:
            spent, outcome = await self._ask(budget)
        except REDIS_FAULTS as exc:
            self._log.warning("quota.ledger_unavailable", error=type(exc).__name__)
            return Failure("unreachable")
        if outcome == _HELD:
            return Failure("recounting")
        return Failure("spent") if outcome < 0 else Success(spent)

    async def note(self) -> None:
        """Re-seed today's count with what this process saw, if Redis lost it, and read it again
        (nothing spent; a fault is left to the next take)."""
        if not self._day or self._clock() >= self._expire_at:
            return
        try:
            await self._ask(0)
        except REDIS_FAULTS:
            return

    async def watch(self, every_s: float, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        """``note`` every ``every_s``, until cancelled."""
        while True:
            await sleep(every_s)
            await self.note()

    async def _ask(self, budget: int) -> tuple[int, int]:
        day = self._day
        self._asked += 1
        name = f"{self._name}-{self._asked}"
        args: list[int | str] = [budget, self._expire_at, self._floor, self._count, name, self._hold_ms]
        spent, count, outcome = await self._take(keys=[self._key(day)], args=args)
        spent, count = int(spent), count.decode() if isinstance(count, bytes) else str(count)
        if day == self._day:
            if count == self._count:
                self._floor = max(self._floor, spent)
            else:
                self._floor, self._count = spent, count
        return spent, int(outcome)
