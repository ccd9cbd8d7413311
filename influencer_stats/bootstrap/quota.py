"""The ``quota`` slot: where the day's units are counted, and the process's one spender of them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from influencer_stats.bootstrap.registry import Registry
from influencer_stats.bootstrap.wiring import Wiring

if TYPE_CHECKING:
    from influencer_stats.algebras.quota import QuotaLedger
    from influencer_stats.interpreters.youtube.quota import QuotaSpender
    from influencer_stats.settings import Settings

LedgerBuilder = Callable[[Wiring], Awaitable["QuotaLedger"]]
QUOTA_LEDGERS: Registry[LedgerBuilder] = Registry("quota")


async def quota_spender(wiring: Wiring) -> QuotaSpender | None:
    """The process's one spender of the day's budget (its ledger the ``quota`` slot's), shared by
    every kind of YouTube call; ``None`` without a budget."""
    from influencer_stats.interpreters.youtube.quota import QuotaSpender

    budget = wiring.quota
    if budget is None:
        return None

    async def build() -> QuotaSpender:
        ledger = await QUOTA_LEDGERS[wiring.settings.choices.one("quota")].build(wiring)
        return QuotaSpender(ledger, budget, wiring.log, wiring.metrics)

    return await wiring.once("quota-spender", build)


def _one_budget(settings: Settings) -> str | None:
    """A count per process would let N workers spend N budgets."""
    from influencer_stats.bootstrap.videos import VIDEO_CLIENTS  # it imports this module

    spends = VIDEO_CLIENTS[settings.choices.one("video_client")].spends_quota
    if settings.workers > 1 and settings.quota_per_day > 0 and spends:
        return f"counts quota units in each process: with --workers {settings.workers} use --quota redis"
    return None


@QUOTA_LEDGERS.add("memory", "units spent today, counted in this process", check=_one_budget)
async def _memory_ledger(_: Wiring) -> QuotaLedger:
    from influencer_stats.interpreters.youtube.quota import MemoryQuotaLedger

    return MemoryQuotaLedger()


@QUOTA_LEDGERS.add(
    "redis",
    "units spent today, one count in Redis for every worker and host",
    ready=("redis",),
    needs=("redis",),
)
async def _redis_ledger(wiring: Wiring) -> QuotaLedger:
    from influencer_stats.interpreters.youtube.quota_redis import RedisQuotaLedger

    keys = wiring.redis_keys()
    return RedisQuotaLedger(await wiring.redis(), keys.quota, wiring.log)
