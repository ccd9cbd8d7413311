"""The CollectionSources contract, run against every registered interpreter (``bootstrap/slices/sources.py``),
each built by its entry's own builder over a temporary SQLite file or the shared Redis; shared ones
are read through a second instance and after a reopen, backed ones also over a dead backend."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from returns.result import Failure, Success

from influencer_stats.algebras.sources import CollectionSources
from influencer_stats.bootstrap.slices.sources import SOURCES
from influencer_stats.domain.models import (
    NO_REVISION,
    CollectionId,
    CollectionSource,
    KeptSource,
    Revision,
    StoreUnavailable,
)
from tests.contract.wired import wired
from tests.shared_redis import shared_redis_url, unique_prefix

ONE, TWO = CollectionId("one"), CollectionId("two")
R1, R2 = Revision("3f9a0c1e5b7d2468"), Revision("0123456789abcdef")
PLAYLIST = KeptSource(CollectionSource("playlist", "PLrAXtmErZgOeiKm4sgNOknGvNjby9efdf"), R1)
CHANNEL = KeptSource(CollectionSource("channel", "UC_x5XG1OV2P6uZZ5FSM9Ttw"), R2)

Open = Callable[[], Awaitable[CollectionSources]]

#: The interpreters every worker and host share (their entries keep nothing per process).
SHARED = [name for name in SOURCES.names() if SOURCES[name].per_process is None]
#: The interpreters with a backend that may not answer: the ones a ``/readyz`` check watches.
BACKED = [name for name in SOURCES.names() if SOURCES[name].ready]


@asynccontextmanager
async def opener(name: str, tmp_path: Path, prefix: str | None = None) -> AsyncIterator[Open]:
    """Open instances of ``name`` over one backend (one SQLite file, one Redis prefix), each with
    its own wiring (its own database connection, its own Redis client), all closed on exit."""
    environ = {"INFLUENCER_STATS_REDIS_PREFIX": prefix or unique_prefix()}
    if "redis" in SOURCES[name].needs:
        environ["REDIS_URL"] = shared_redis_url()
    async with AsyncExitStack() as stack:

        async def open_one() -> CollectionSources:
            wiring = await stack.enter_async_context(wired(tmp_path, {"store": "dict"}, environ=environ))
            return await SOURCES[name].build(wiring)

        yield open_one


@pytest.fixture(params=SOURCES.names())
async def sources(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[CollectionSources]:
    async with opener(request.param, tmp_path) as open_one:
        yield await open_one()


async def test_a_source_put_is_got_back(sources: CollectionSources) -> None:
    odd = KeptSource(CollectionSource("playlist", "PL:a b/ü:"), NO_REVISION)  # any text, no revision

    assert await sources.put(ONE, PLAYLIST) == Success(None)
    assert await sources.put(TWO, CHANNEL) == Success(None)
    assert await sources.put(CollectionId("three"), odd) == Success(None)

    assert await sources.get(ONE) == Success(PLAYLIST)
    assert await sources.get(TWO) == Success(CHANNEL)
    assert await sources.get(CollectionId("three")) == Success(odd)


async def test_a_put_replaces_the_source_kept(sources: CollectionSources) -> None:
    await sources.put(ONE, PLAYLIST)

    assert await sources.put(ONE, CHANNEL) == Success(None)

    assert await sources.get(ONE) == Success(CHANNEL)


async def test_a_collection_with_no_source_has_none_and_that_is_no_error(sources: CollectionSources) -> None:
    assert await sources.get(ONE) == Success(None)


async def test_putting_none_forgets_the_source_of_that_collection_only(sources: CollectionSources) -> None:
    await sources.put(ONE, PLAYLIST)
    await sources.put(TWO, CHANNEL)

    assert await sources.put(ONE, None) == Success(None)

    assert await sources.get(ONE) == Success(None)
    assert await sources.get(TWO) == Success(CHANNEL)
    assert await sources.put(ONE, None) == Success(None)  # forgetting what is not there: no error


async def test_forget_if_forgets_a_source_kept_at_that_revision_only(sources: CollectionSources) -> None:
    await sources.put(ONE, PLAYLIST)
    await sources.put(TWO, CHANNEL)
    await sources.claim(ONE, 7)

    assert await sources.forget_if(ONE, R2) == Success(None)  # kept at R1: stays
    assert await sources.forget_if(TWO, R1) == Success(None)  # kept at R2: stays
    assert await sources.get(ONE) == Success(PLAYLIST)
    assert await sources.get(TWO) == Success(CHANNEL)
    assert await sources.claim(ONE, 7) == Success(False)

    assert await sources.forget_if(ONE, R1) == Success(None)

    assert await sources.get(ONE) == Success(None)
    await sources.put(ONE, PLAYLIST)
    assert await sources.claim(ONE, 7) == Success(True)  # the claim went with it
    await sources.put(ONE, None)
    assert await sources.get(TWO) == Success(CHANNEL)
    assert await sources.forget_if(ONE, R1) == Success(None)  # nothing there: no error


async def test_forget_if_racing_a_put_at_a_new_revision_never_forgets_the_new_one(
    sources: CollectionSources,
) -> None:
    for n in range(20):
        old, new = Revision(f"old{n}"), Revision(f"new{n}")
        await sources.put(ONE, KeptSource(PLAYLIST.source, old))

        await asyncio.gather(sources.put(ONE, KeptSource(CHANNEL.source, new)), sources.forget_if(ONE, old))

        assert await sources.get(ONE) in (Success(KeptSource(CHANNEL.source, new)), Success(None))
        assert await sources.forget_if(ONE, old) == Success(None)
        kept = (await sources.get(ONE)).unwrap()
        assert kept is None or kept.revision == new


async def test_a_slot_is_claimed_once_and_never_after_a_later_one(sources: CollectionSources) -> None:
    await sources.put(ONE, PLAYLIST)
    await sources.put(TWO, CHANNEL)

    assert await sources.claim(ONE, 7) == Success(True)
    assert await sources.claim(ONE, 7) == Success(False)
    assert await sources.claim(TWO, 7) == Success(True)  # per collection
    assert await sources.claim(ONE, 6) == Success(False)  # earlier than one claimed
    assert await sources.claim(ONE, 8) == Success(True)
    assert await sources.claim(ONE, 7) == Success(False)
    assert await sources.claim(TWO, 8) == Success(True)


async def test_putting_none_drops_the_claim_of_that_collection_only(sources: CollectionSources) -> None:
    await sources.put(ONE, PLAYLIST)
    await sources.put(TWO, CHANNEL)
    await sources.claim(ONE, 7)
    await sources.claim(TWO, 7)

    await sources.put(ONE, None)
    await sources.put(ONE, PLAYLIST)

    assert await sources.claim(ONE, 7) == Success(True)
    assert await sources.claim(TWO, 7) == Success(False)


async def test_nothing_is_claimed_for_a_collection_with_no_source_kept(sources: CollectionSources) -> None:
    """A refresher that read a source just before a DELETE forgot it claims nothing: no claim
    outlives its source (issue 31's soak: one claim key left per such race, for 30 days)."""
    await sources.put(ONE, PLAYLIST)
    await sources.put(ONE, None)

    assert await sources.claim(ONE, 7) == Success(False)
    assert await sources.claim(TWO, 7) == Success(False)  # never kept

    await sources.put(ONE, PLAYLIST)
    assert await sources.claim(ONE, 7) == Success(True)  # the refused claims left nothing behind


async def test_of_many_concurrent_claims_of_one_slot_exactly_one_is_taken(sources: CollectionSources) -> None:
    await sources.put(ONE, PLAYLIST)

    claims = await asyncio.gather(*(sources.claim(ONE, 3) for _ in range(50)))

    assert sorted(c.unwrap() for c in claims) == [False] * 49 + [True]


async def test_concurrent_puts_leave_one_of_the_written_sources(sources: CollectionSources) -> None:
    written = [KeptSource(CollectionSource("playlist", f"PL{n}"), Revision(f"r{n}")) for n in range(25)]
    others = [CollectionId(f"other-{n}") for n in range(25)]

    puts = await asyncio.gather(
        *(sources.put(ONE, source) for source in written),
        *(sources.put(other, KeptSource(CollectionSource("channel", other), R1)) for other in others),
    )

    assert set(puts) == {Success(None)}
    assert (await sources.get(ONE)).unwrap() in written
    for other in others:
        assert await sources.get(other) == Success(KeptSource(CollectionSource("channel", other), R1))


@pytest.mark.parametrize("name", SHARED)
async def test_what_one_instance_put_or_forgot_another_sees(name: str, tmp_path: Path) -> None:
    async with opener(name, tmp_path) as open_one:
        first, second = await open_one(), await open_one()

        await first.put(ONE, PLAYLIST)
        await first.put(TWO, CHANNEL)
        await second.put(TWO, None)

        assert await second.get(ONE) == Success(PLAYLIST)
        assert await first.get(TWO) == Success(None)


@pytest.mark.parametrize("name", SHARED)
async def test_of_instances_racing_for_one_slot_one_claims_it(name: str, tmp_path: Path) -> None:
    async with opener(name, tmp_path) as open_one:
        first, second = await open_one(), await open_one()
        await first.put(ONE, PLAYLIST)

        claims = await asyncio.gather(*(s.claim(ONE, 3) for _ in range(10) for s in (first, second)))

        assert sorted(c.unwrap() for c in claims) == [False] * 19 + [True]


@pytest.mark.parametrize("name", SHARED)
async def test_sources_and_claims_survive_a_reopen(name: str, tmp_path: Path) -> None:
    prefix = unique_prefix()
    async with opener(name, tmp_path, prefix) as open_one:
        before = await open_one()
        await before.put(ONE, PLAYLIST)
        await before.claim(ONE, 5)
    # Everything the first instance opened is closed: a new database connection, a new client.

    async with opener(name, tmp_path, prefix) as open_one:
        after = await open_one()

        assert await after.get(ONE) == Success(PLAYLIST)
        assert await after.claim(ONE, 5) == Success(False)
        assert await after.claim(ONE, 6) == Success(True)


async def _opened_already() -> Any:
    raise AssertionError("the entry opened the database as it was built")


@asynccontextmanager
async def unanswering(name: str, tmp_path: Path) -> AsyncIterator[CollectionSources]:
    """``name`` over a backend that cannot answer: a Redis URL nobody listens at, the shared SQLite
    connection closed under the interpreter."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        environ = {"REDIS_URL": f"redis://127.0.0.1:{s.getsockname()[1]}"}  # closed when used
    async with wired(tmp_path, {"store": "dict"}, environ=environ) as wiring:
        sources = await SOURCES[name].build(wiring)
        if "sqlite" in SOURCES[name].ready:  # the shared database (the sqlite slice's ``database``)
            database: Any = await wiring.once("sqlite", _opened_already)
            await database.run(lambda db: db.close())
        yield sources


@pytest.mark.parametrize("name", BACKED)
async def test_a_backend_that_cannot_answer_is_store_unavailable_never_raised(
    name: str, tmp_path: Path
) -> None:
    async with unanswering(name, tmp_path) as sources:
        outcomes = [
            await sources.get(ONE),
            await sources.put(ONE, PLAYLIST),
            await sources.put(ONE, None),
            await sources.forget_if(ONE, R1),
            await sources.claim(ONE, 1),
        ]

    for outcome in outcomes:
        assert isinstance(outcome, Failure), outcome
        assert isinstance(outcome.failure(), StoreUnavailable)
