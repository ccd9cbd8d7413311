"""The collection sources' choices against ``tests/per_process.py``: a source one worker put is
got through the other's, or the choice says it keeps them per process and refuses
``--workers 2``."""

from __future__ import annotations

from pathlib import Path

import pytest
from returns.result import Success

from influencer_stats.bootstrap.slices.sources import SOURCES, build_sources
from influencer_stats.bootstrap.wiring import Wiring
from influencer_stats.domain.models import CollectionId, CollectionSource, KeptSource, Revision
from tests.per_process import assert_shared_or_declared

ONE = CollectionId("one")


async def _sources_share(one: Wiring, two: Wiring) -> bool:
    """A source one worker put is got through the other's."""
    writer, reader = await build_sources(one), await build_sources(two)
    kept = KeptSource(CollectionSource("playlist", "PL1"), Revision("r1"))
    await writer.put(ONE, kept)
    return await reader.get(ONE) == Success(kept)


@pytest.mark.parametrize("name", SOURCES.names())
async def test_sources_another_worker_would_not_see_are_declared_and_refuse_several_workers(
    name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    await assert_shared_or_declared("sources", name, _sources_share, {}, tmp_path, request)
