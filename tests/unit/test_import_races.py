"""Every interleaving of a refresh (or a PUT from a playlist) with a PUT of ids or a DELETE, through
``HttpApi``: each call the two requests make to the store, the sources or YouTube waits for its
turn in a scripted order, and every order is run. Nothing a user saved is lost, no source outlives
its collection. Deterministic: no sleeps, one event loop, the turns decide.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterator, Sequence
from contextvars import ContextVar
from itertools import combinations
from typing import Any, TypeVar

import pytest
from returns.result import Result, Success

from influencer_stats.domain.models import (
    Collection,
    CollectionId,
    CollectionNotFound,
    CollectionSource,
    KeptSource,
    ReadError,
    Replaced,
    Revision,
    RevisionChanged,
    SaveOutcome,
    StoreUnavailable,
    VideoId,
)
from influencer_stats.http.problems import Reply
from influencer_stats.interpreters.collections.memory_dict import DictCollectionStore
from influencer_stats.interpreters.readers.fake import FakeSourceReader
from influencer_stats.interpreters.sources.memory import MemoryCollectionSources
from tests.unit.http_api_support import document as _document
from tests.unit.sources_support import SourcesService, sources_service

_T = TypeVar("_T")
C = CollectionId("c")
PLAYLIST = "PLdemo3"
IDS = ["-4lB5EKS5Uk"]
#: More turns than either request takes: a request's turns left over are skipped when it ends.
FIRST_TURNS, SECOND_TURNS = 7, 3
_turn: ContextVar[str | None] = ContextVar("turn", default=None)


class Turns:
    """Lets the scripted requests make their calls one at a time, in ``order`` (a name a call);
    calls made outside a scripted request (the setup, the checks) do not wait."""

    def __init__(self, order: Sequence[str]) -> None:
        self._order = list(order)
        self._ended: set[str] = set()
        self._changed = asyncio.Condition()
        self.trace: list[str] = []

    async def take(self, call: str) -> None:
        me = _turn.get()
        if me is None:
            return
        async with self._changed:
            await self._changed.wait_for(lambda: self._mine(me))
            if self._order:
                self._order.pop(0)
            self.trace.append(f"{me}:{call}")
            self._changed.notify_all()

    def _mine(self, me: str) -> bool:
        while self._order and self._order[0] in self._ended:
            self._order.pop(0)
        return not self._order or self._order[0] == me

    async def run(self, name: str, request: Awaitable[_T]) -> _T:
        _turn.set(name)  # this task's own copy of the context
        try:
            return await request
        finally:
            async with self._changed:
                self._ended.add(name)
                self._changed.notify_all()


class TurnStore(DictCollectionStore):
    def __init__(self, turns: Turns) -> None:
        super().__init__()
        self.turns = turns

    async def get(
        self, collection_id: CollectionId
    ) -> Result[Collection, CollectionNotFound | StoreUnavailable]:
        await self.turns.take("store.get")
        return await super().get(collection_id)

    async def save(
        self, collection_id: CollectionId, videos: tuple[VideoId, ...]
    ) -> Result[SaveOutcome, StoreUnavailable]:
        await self.turns.take("store.save")
        return await super().save(collection_id, videos)

    async def replace_if(
        self, collection_id: CollectionId, videos: tuple[VideoId, ...], revision: Revision
    ) -> Result[Replaced, CollectionNotFound | RevisionChanged | StoreUnavailable]:
        await self.turns.take("store.replace_if")
        return await super().replace_if(collection_id, videos, revision)

    async def delete(
        self, collection_id: CollectionId
    ) -> Result[None, CollectionNotFound | StoreUnavailable]:
        await self.turns.take("store.delete")
        return await super().delete(collection_id)


class TurnSources(MemoryCollectionSources):
    def __init__(self, turns: Turns) -> None:
        super().__init__(100)
        self.turns = turns

    async def get(self, collection_id: CollectionId) -> Result[KeptSource | None, StoreUnavailable]:
        await self.turns.take("sources.get")
        return await super().get(collection_id)

    async def put(
        self, collection_id: CollectionId, kept: KeptSource | None
    ) -> Result[None, StoreUnavailable]:
        await self.turns.take("sources.put")
        return await super().put(collection_id, kept)

    async def forget_if(
        self, collection_id: CollectionId, revision: Revision
    ) -> Result[None, StoreUnavailable]:
        await self.turns.take("sources.forget_if")
        return await super().forget_if(collection_id, revision)


class TurnReader(FakeSourceReader):
    def __init__(self, turns: Turns) -> None:
        self.turns = turns

    async def videos(self, source: CollectionSource, limit: int) -> Result[tuple[VideoId, ...], ReadError]:
        await self.turns.take("youtube")
        return await super().videos(source, limit)


def orders() -> Iterator[str]:
    """Every order of the first request's turns (``1``) and the second's (``2``)."""
    total = FIRST_TURNS + SECOND_TURNS
    for seconds in combinations(range(total), SECOND_TURNS):
        yield "".join("2" if n in seconds else "1" for n in range(total))


async def race(order: str, first: str, second: str) -> tuple[SourcesService, TurnSources, Reply, Reply]:
    """A collection imported from ``PLAYLIST`` (unless ``first`` is that import), then ``first``
    and ``second`` (``refresh``, ``import``, ``ids``, ``delete``) at once, in ``order``."""
    turns = Turns(["first" if turn == "1" else "second" for turn in order])
    sources = TurnSources(turns)
    api = sources_service(store=TurnStore(turns), sources=sources, reader=TurnReader(turns))
    if first != "import":
        assert (await api.put(C, {"playlist": PLAYLIST})).status == 201
    requests = {
        "refresh": lambda: api.refresh(C),
        "import": lambda: api.put(C, {"playlist": PLAYLIST}),
        "ids": lambda: api.put(C, {"videos": IDS}),
        "delete": lambda: api.request("DELETE", f"/collections/{C}"),
    }
    async with asyncio.timeout(5):
        one, two = await asyncio.gather(
            asyncio.create_task(turns.run("first", requests[first]())),
            asyncio.create_task(turns.run("second", requests[second]())),
        )
    return api, sources, one, two


def shown(reply: Reply) -> Any:
    return _document(reply)


async def playlist_videos() -> list[str]:
    return list((await FakeSourceReader().videos(CollectionSource("playlist", PLAYLIST), 100)).unwrap())


async def kept_is_the_collections(api: SourcesService, sources: TurnSources) -> bool:
    """Whether a source is kept and it is the collection's (kept at the collection's revision)."""
    kept, stored = (await sources.get(C)).unwrap(), await api.store.get(C)
    return kept is not None and isinstance(stored, Success) and stored.unwrap().revision == kept.revision


@pytest.mark.parametrize("order", list(orders()))
async def test_ids_put_during_a_refresh_are_what_stays_whatever_the_order(order: str) -> None:
    api, sources, refreshed, put = await race(order, "refresh", "ids")

    assert put.status == 200, (put, order)
    assert refreshed.status in (200, 409), refreshed
    assert shown(await api.get(f"/collections/{C}")) == {"videos": IDS}  # no source shown
    assert not await kept_is_the_collections(api, sources)  # a refresh had nothing to read
    again = await api.refresh(C)
    assert again.status == 409
    assert shown(await api.get(f"/collections/{C}")) == {"videos": IDS}
    assert (await sources.get(C)).unwrap() is None  # a stranger's source left behind: tidied by then


@pytest.mark.parametrize("order", list(orders()))
async def test_a_collection_deleted_during_a_refresh_stays_deleted_with_no_source_left(order: str) -> None:
    api, sources, refreshed, deleted = await race(order, "refresh", "delete")

    assert deleted.status == 204
    assert refreshed.status in (200, 404, 409), refreshed
    assert (await api.get(f"/collections/{C}")).status == 404
    assert (await api.store.ids(None, 10)).unwrap() == ()
    assert (await sources.get(C)).unwrap() is None  # no orphan


@pytest.mark.parametrize("order", list(orders()))
async def test_a_collection_deleted_during_its_import_leaves_no_source_without_it(order: str) -> None:
    api, sources, imported, deleted = await race(order, "import", "delete")

    assert imported.status == 201
    assert deleted.status in (204, 404)
    read = await api.get(f"/collections/{C}")
    if read.status == 404:
        assert (await sources.get(C)).unwrap() is None  # no orphan
    else:  # the import landed after the delete: its collection, with or without its source
        assert shown(read)["videos"] == await playlist_videos()


@pytest.mark.parametrize("order", list(orders()))
async def test_an_import_racing_a_put_of_ids_leaves_one_of_them_whole(order: str) -> None:
    api, sources, imported, put = await race(order, "import", "ids")

    assert imported.status in (200, 201) and put.status in (200, 201)
    assert shown(await api.get(f"/collections/{C}")) in (
        {"videos": IDS},
        {"videos": await playlist_videos(), "source": {"playlist": PLAYLIST}},
    )
    if (await api.get(f"/collections/{C}")).status == 200 and not await kept_is_the_collections(api, sources):
        assert (await api.refresh(C)).status == 409
