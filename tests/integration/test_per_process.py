"""State another worker would not see: two instances built from the same settings, as two worker
processes build them, either share it, or the entry declares it kept per process and
``--workers 2`` is refused.

For the slots where another worker is observable: a store (a collection saved through one is
read through the other), a stats cache (a write through one worker's store reaches what the
other answers), a quota ledger (the two never spend more than the budget together), a history or
the collection sources (what one wrote, the other reads).
Parametrized from the registries: a new choice that keeps its state in the process and says
nothing fails here (unless a check of its own refuses several workers), and so does one
declared per process whose instances do share.
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

import pytest
from returns.result import Success

from influencer_stats.algebras import CollectionStatsQuery, CollectionStore
from influencer_stats.bootstrap.history import build_history
from influencer_stats.bootstrap.quota import QUOTA_LEDGERS
from influencer_stats.bootstrap.root import (
    build_sources,
    build_stats,
    build_store,
    build_video_stats,
    open_wiring,
)
from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.bootstrap.wiring import Wiring
from influencer_stats.config.resolve import ConfigError, resolve
from influencer_stats.domain.models import (
    Collection,
    CollectionId,
    CollectionSource,
    KeptSource,
    Revision,
    StatsPoint,
    VideoId,
)
from tests.declared_paths import redirected_paths
from tests.needs import resolve_needing

ONE = CollectionId("one")
A, B = VideoId("-4lB5EKS5Uk"), VideoId("-jlLkTtgWUk")
BUDGET = 3
#: Whether what one instance did is seen by the other.
Shares = Callable[[Wiring, Wiring], Awaitable[bool]]


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


async def _ledgers_share(one: Wiring, two: Wiring) -> bool:
    """Two ledgers taking units of one day never spend more than the budget together."""
    entry = QUOTA_LEDGERS[one.settings.choices.one("quota")]
    ledgers = [await entry.build(one), await entry.build(two)]
    day = f"per-process-{uuid.uuid4().hex}"
    taken = [await ledger.take(day, BUDGET, 60) for ledger in ledgers for _ in range(BUDGET)]
    return sum(isinstance(outcome, Success) for outcome in taken) <= BUDGET


async def _histories_share(one: Wiring, two: Wiring) -> bool:
    """A point one worker's history recorded is read through the other's."""
    writer, reader = await build_history(one), await build_history(two)
    await writer.record(ONE, StatsPoint(1_700_000_000.0, 1, 2, 3, 1, 0))
    return await reader.points(ONE, 0.0, 2e9, 10) == Success((StatsPoint(1_700_000_000.0, 1, 2, 3, 1, 0),))


async def _sources_share(one: Wiring, two: Wiring) -> bool:
    """A source one worker put is got through the other's."""
    writer, reader = await build_sources(one), await build_sources(two)
    kept = KeptSource(CollectionSource("playlist", "PL1"), Revision("r1"))
    await writer.put(ONE, kept)
    return await reader.get(ONE) == Success(kept)


#: Slot → how to see another worker's state, and the choices it is seen with.
OBSERVED: Mapping[str, tuple[Shares, Mapping[str, str]]] = {
    "store": (_store_shares, {"cache": "none"}),
    "cache": (_stats_share, {"store": "sqlite"}),
    "quota": (_ledgers_share, {"video_client": "aiohttp-batched"}),
    "history": (_histories_share, {}),
    "sources": (_sources_share, {}),
}
CASES = [(slot, name) for slot in OBSERVED for name in SLOTS[slot].registry.names()]


def _refusal(environ: Mapping[str, str], flags: Mapping[str, str]) -> str | None:
    try:
        resolve(environ, flags)
    except ConfigError as error:
        return str(error)
    return None


@pytest.mark.parametrize(("slot", "name"), CASES, ids=[f"{slot}={name}" for slot, name in CASES])
async def test_state_another_worker_would_not_see_is_declared_and_refuses_several_workers(
    slot: str, name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    shares, base = OBSERVED[slot]
    environ = {
        **redirected_paths(tmp_path / "files"),  # one file for both instances, as for two workers
        "YOUTUBE_API_URL": "http://127.0.0.1:9/youtube/v3/videos",  # never called
    }
    flags = {"logger": "silent", "metrics": "none", **base, slot: name}
    settings = resolve_needing(request, environ, flags)  # Redis only when a choice needs it
    async with open_wiring(settings, io.BytesIO()) as one, open_wiring(settings, io.BytesIO()) as two:
        shared = await shares(one, two)

    entry = SLOTS[slot].registry[name]
    refused = _refusal(environ, {**flags, "workers": "2"})
    this_choice = f"{slot.replace('_', ' ')} {name!r} "  # the refusal is this choice's, no other slot's
    if entry.per_process is None:
        assert shared or (refused or "").startswith(this_choice), (
            f"another worker would not see it and --workers 2 is not refused for it ({refused}):"
            " declare per_process=(what, instead)"
        )
    else:
        what, instead = entry.per_process
        assert not shared, "two instances share it: it keeps nothing per process"
        assert refused == f"{this_choice}keeps {what} in each process: with --workers 2 use {instead}"
