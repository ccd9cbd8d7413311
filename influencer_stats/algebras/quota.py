"""Where the quota units spent per day are counted: this process, or Redis for every worker."""

from __future__ import annotations

from typing import Literal, Protocol

from returns.result import Result

#: Why ``take`` spent nothing: the day's budget is spent, the ledger did not answer, or it is
#: recounting a count it lost (a Redis restarted without persistence) and spends nothing meanwhile.
Refusal = Literal["spent", "unreachable", "recounting"]


class QuotaLedger(Protocol):
    """The units spent per quota day: in this process, or in Redis for every worker and host.

    Contract: ``take`` spends one unit of ``day`` only if fewer than ``budget``
    are spent, atomically (concurrent takers never spend more than ``budget``
    together), and returns the units spent after it; ``"spent"`` when the
    budget is spent; ``"unreachable"`` when the ledger cannot be asked (then
    nothing was spent and the caller must not call); ``"recounting"`` while
    it re-seeds a count it lost from what its takers saw (nothing spent, do
    not call: an unknown count is taken as spent). It never raises for it.
    """

    async def take(self, day: str, budget: int, keep_s: int) -> Result[int, Refusal]: ...
