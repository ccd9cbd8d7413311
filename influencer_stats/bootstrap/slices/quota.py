"""Slice ``quota``: the day's budget of YouTube units, never overspent (``--quota memory|redis``).

Its entry ``memory`` (``preferred``: the slot's default while installed) in the core's ``quota``
slot, ``sqlite`` with the ``sqlite`` slice (the joint ``quota__sqlite``, chosen by name: each
unit waits for an fsync) and ``redis`` with the ``redis`` slice (the joint
``quota__redis``), build a ``CountedQuota`` (a ``Quota``, ``bootstrap/quota.py``) of
``INFLUENCER_STATS_QUOTA_PER_DAY`` units per quota day (``INFLUENCER_STATS_QUOTA_DAY``), counted in
this process (forgotten by a restart), in the SQLite file (kept) or in Redis for every worker and
host (recounted when Redis loses it). The root and the other slices ask that record,
never this module: the YouTube base puts each ``videos.list`` call under the governor
(``governed``), the readers of playlists and channels spend through the same spender, the
per-video caches stretch freshness by it, the snapshots and refreshes wait while it runs short,
the metrics show its budget. A spent budget answers ``QuotaExhausted`` (core: a domain value the
video cache serves stale for, the breaker does not count and the edge answers as a 503 with
``Retry-After``, whoever refused).

Without this slice the slot keeps ``none``: the YouTube clients spend nothing and count nothing,
no call is refused for the budget, freshness is never stretched, and profiles naming a ledger
(``distributed``'s ``quota="redis"``) are not offered.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from influencer_stats.bootstrap.quota import NO_QUOTA, QUOTAS, Quota
from influencer_stats.bootstrap.slices.slice import Slice
from influencer_stats.bootstrap.videos import VIDEO_CLIENTS
from influencer_stats.bootstrap.wiring import Resources, Wiring

if TYPE_CHECKING:
    from influencer_stats.algebras.quota import QuotaLedger
    from influencer_stats.algebras.youtube import VideosListCall
    from influencer_stats.interpreters.quota.quota import QuotaBudget, QuotaSpender
    from influencer_stats.settings import Settings

SLICE = Slice(
    "quota",
    "the day's budget of YouTube units, never overspent (--quota memory|redis)",
    files=(
        "influencer_stats/interpreters/quota",
        "influencer_stats/algebras/quota.py",
        "tests/unit/test_*quota*.py",
        "tests/contract/test_*quota*.py",
        "tests/integration/test_*quota*.py",
        # The video cache's and this slice's both: it goes with the first of the two removed.
        "tests/integration/test_quota_economy.py",
        # The day in a minute (perf/day.py), the video cache's too: gone with the first removed.
        "perf/day.py",
        "perf/day_report.py",
        "tests/integration/test_perf_day.py",
    ),
    modules=("influencer_stats.interpreters.quota", "influencer_stats.algebras.quota"),
)

#: Builds the ledger of a choice: where the units spent per day are counted.
LedgerBuilder = Callable[[Wiring], Awaitable["QuotaLedger"]]


class CountedQuota(Quota):
    """A budget of ``QuotaBudget.units`` a day, its units counted by the ledger ``ledger`` builds
    (on first use: the process's one spender, built once)."""

    __slots__ = ("_budget", "_ledger")

    def __init__(self, budget: QuotaBudget, ledger: LedgerBuilder) -> None:
        self._budget = budget
        self._ledger = ledger

    def units(self) -> int:
        return self._budget.units

    def short(self) -> bool:
        return self._budget.short()

    def stretch(self) -> float:
        return self._budget.stretch()

    async def spender(self, wiring: Wiring) -> QuotaSpender:
        from influencer_stats.interpreters.quota.quota import QuotaSpender

        async def build() -> QuotaSpender:
            return QuotaSpender(await self._ledger(wiring), self._budget, wiring.log, wiring.metrics)

        return await wiring.once("quota-spender", build)

    async def governed(self, wiring: Wiring, call: VideosListCall) -> VideosListCall:
        from influencer_stats.interpreters.quota.quota import QuotaGovernor

        return QuotaGovernor(call, await self.spender(wiring))


def counted(settings: Settings, ledger: LedgerBuilder) -> Quota:
    """The day's budget of ``quota_per_day`` units counted by ``ledger``; no budget with 0."""
    from influencer_stats.interpreters.quota.quota import QuotaBudget, QuotaDay

    if settings.quota_per_day == 0:
        return NO_QUOTA
    # Wall time: quota days are Pacific calendar days, shared by hosts.
    return CountedQuota(
        QuotaBudget(settings.quota_per_day, QuotaDay(settings.quota_day_s), time.time), ledger
    )


def _one_budget(settings: Settings) -> str | None:
    """A count per process would let N workers spend N budgets."""
    spends = VIDEO_CLIENTS[settings.choices.one("video_client")].spends_quota
    if settings.workers > 1 and settings.quota_per_day > 0 and spends:
        shared = [entry.name for entry in QUOTAS if entry.shared]  # the installed counts workers share
        instead = f"--quota {' or '.join(shared)}" if shared else "--workers 1"
        return f"counts quota units in each process: with --workers {settings.workers} use {instead}"
    return None


@QUOTAS.add(
    "memory",
    "units spent today, counted in this process",
    check=_one_budget,
    preferred=True,
)
async def _memory(resources: Resources) -> Quota:
    return counted(resources.settings, _memory_ledger)


async def _memory_ledger(_: Wiring) -> QuotaLedger:
    from influencer_stats.interpreters.quota.quota import MemoryQuotaLedger

    return MemoryQuotaLedger()
