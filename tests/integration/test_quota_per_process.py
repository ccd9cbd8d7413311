"""The quota's choices against ``tests/per_process.py``: two workers' counts never spend more than
the day's budget together, or the choice refuses ``--workers 2`` (``memory``, with a client that
spends the budget)."""

from __future__ import annotations

from pathlib import Path

import pytest

from influencer_stats.bootstrap.quota import QUOTAS
from influencer_stats.bootstrap.wiring import Wiring
from tests.per_process import assert_shared_or_declared
from tests.support import A_YOUTUBE_CLIENT

BUDGET = 3


async def _counts_share(one: Wiring, two: Wiring) -> bool:
    """Two workers' spenders, each spending a budget's worth, never spend more than it together."""
    spenders = [await one.quota.spender(one), await two.quota.spender(two)]
    spent = [
        await spender.spend() is None for spender in spenders if spender is not None for _ in range(BUDGET)
    ]
    return sum(spent) <= BUDGET


@pytest.mark.parametrize("name", QUOTAS.names())
async def test_a_count_another_worker_would_not_see_is_declared_and_refuses_several_workers(
    name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    base, budget = {"video_client": A_YOUTUBE_CLIENT}, {"INFLUENCER_STATS_QUOTA_PER_DAY": str(BUDGET)}
    await assert_shared_or_declared("quota", name, _counts_share, base, tmp_path, request, budget)
