"""State another worker would not see: two instances built from the same settings, as two worker
processes build them, either share it, or the entry declares it kept per process and
``--workers 2`` is refused.

For the slots where another worker is observable: a store (a collection saved through one is
read through the other), a stats cache (a write through one worker's store reaches what the
other answers); a slice's tests check its own choices (``tests/per_process.py``: the quota's in
``test_quota_per_process.py``).
Parametrized from the registries: a new choice that keeps its state in the process and says
nothing fails here (unless a check of its own refuses several workers), and so does one
declared per process whose instances do share.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
from returns.result import Success

from influencer_stats.algebras import CollectionStatsQuery, CollectionStore
from influencer_stats.bootstrap.root import build_stats, build_store, build_video_stats
from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.bootstrap.wiring import Wiring
from influencer_stats.domain.models import Collection, CollectionId, VideoId
from tests.per_process import Shares, assert_shared_or_declared
from tests.support import SHARED_STORE

ONE = CollectionId("one")
A, B = VideoId("-4lB5EKS5Uk"), VideoId("-jlLkTtgWUk")


async def _store_shares(one: Wiring, two: Wiring) -> bool:
    """A collection saved through one store is read through the other."""
    writer, reader = await build_store(one), await build_store(two)
    await writer.save(ONE, (A,))
    return await reader.get(ONE) == Success(Collection(ONE, (A,)))


async def _stats(wiring: Wiring) -> tuple[CollectionStatsQuery, CollectionStore]:
    return await build_stats(wiring, await build_store(wiring), await build_video_stats(wiring))


async def _stats_share(one: Wiring, two: Wiring) -> bool:
    """A write through one worker's store reaches what the other's stats query answers."""
    (_, writer), (reader, _) = await _stats(one), await _stats(two)
    await writer.save(ONE, (A, B))
    assert (await reader.stats(ONE)).unwrap().stats.videos == 2  # kept by a cache, if there is one
    await writer.save(ONE, (A,))
    return (await reader.stats(ONE)).unwrap().stats.videos == 1


#: Slot → how to see another worker's state, and the choices it is seen with.
OBSERVED: Mapping[str, tuple[Shares, Mapping[str, str]]] = {
    "store": (_store_shares, {"cache": "none"}),
}
if SHARED_STORE is not None:  # the caches are seen through a store workers share, if one is installed
    OBSERVED = {**OBSERVED, "cache": (_stats_share, {"store": SHARED_STORE})}
CASES = [(slot, name) for slot in OBSERVED for name in SLOTS[slot].registry.names()]


@pytest.mark.parametrize(("slot", "name"), CASES, ids=[f"{slot}={name}" for slot, name in CASES])
async def test_state_another_worker_would_not_see_is_declared_and_refuses_several_workers(
    slot: str, name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    shares, base = OBSERVED[slot]
    await assert_shared_or_declared(slot, name, shares, base, tmp_path, request)
