"""The history's choices against ``tests/per_process.py``: a point one worker's history recorded
is read through the other's, or the choice says it keeps them per process and refuses
``--workers 2``."""

from __future__ import annotations

from pathlib import Path

import pytest
from returns.result import Success

from influencer_stats.bootstrap.slices.history import HISTORIES, build_history
from influencer_stats.bootstrap.wiring import Wiring
from influencer_stats.domain.history import StatsPoint
from influencer_stats.domain.models import CollectionId
from tests.per_process import assert_shared_or_declared

ONE = CollectionId("one")
POINT = StatsPoint(1_700_000_000.0, 1, 2, 3, 1, 0)


async def _histories_share(one: Wiring, two: Wiring) -> bool:
    """A point one worker's history recorded is read through the other's."""
    writer, reader = await build_history(one), await build_history(two)
    await writer.record(ONE, POINT)
    return await reader.points(ONE, 0.0, 2e9, 10) == Success((POINT,))


@pytest.mark.parametrize("name", HISTORIES.names())
async def test_a_history_another_worker_would_not_see_is_declared_and_refuses_several_workers(
    name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    await assert_shared_or_declared("history", name, _histories_share, {}, tmp_path, request)
