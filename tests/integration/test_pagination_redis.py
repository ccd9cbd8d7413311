"""The Redis store's index behind ``GET /collections?limit=N&cursor=C`` (the ``redis`` slice's).

- The Redis store pages a sorted set: ids deployed in the set index of the versions
  before paging, or written there by such a version since, are listed; an indexed id
  without its collection is skipped without shortening the page; and with 100,000 ids
  (where the unpaginated listing always answered 503) each page of 1,000 answers fast.

Paging through every server: ``test_pagination.py``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from redis.asyncio import Redis
from returns.result import Success

from influencer_stats.domain.models import CollectionId
from influencer_stats.interpreters.collections.redis_store import RedisCollectionStore
from influencer_stats.interpreters.redis_keys import RedisKeys
from tests.containers import redis_server
from tests.shared_redis import unique_prefix
from tests.support import profile_args, running_service


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as redis:
        yield redis.url


@pytest.fixture
async def redis_client(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    try:
        yield client
    finally:
        await client.aclose()


async def deploy_before_paging(client: Redis, keys: RedisKeys, ids: list[str]) -> None:
    """What the versions before paging wrote for each id: its collection and the set index."""
    for start in range(0, len(ids), 10_000):
        async with client.pipeline(transaction=False) as pipe:
            for collection_id in ids[start : start + 10_000]:
                pipe.set(keys.collection(collection_id), b"[]")
                pipe.incr(keys.version(collection_id))
            pipe.sadd(keys.index, *ids[start : start + 10_000])
            await pipe.execute()


async def all_pages(store: RedisCollectionStore, limit: int) -> list[tuple[CollectionId, ...]]:
    pages: list[tuple[CollectionId, ...]] = []
    after: CollectionId | None = None
    for _ in range(1_000):
        page = (await store.ids(after, limit)).unwrap()
        pages.append(page)
        if len(page) < limit:
            return pages
        after = page[-1]
    raise AssertionError("the listing never ended")


async def test_ids_deployed_in_the_set_index_before_paging_are_all_listed(redis_client: Redis) -> None:
    keys = RedisKeys(unique_prefix())
    deployed = [f"old-{n:05d}" for n in range(2_500)]
    await deploy_before_paging(redis_client, keys, deployed)
    store = RedisCollectionStore(redis_client, keys, wait_replicas=0, wait_ms=250)

    # Two first pages at once: one copies the set into the sorted set, the other waits for it.
    first, concurrent = await asyncio.gather(store.ids(None, 1_000), store.ids(None, 1_000))
    pages = await all_pages(store, 1_000)

    assert first == concurrent == Success(tuple(deployed[:1_000]))
    assert [i for page in pages for i in page] == deployed
    assert await redis_client.zcard(keys.sorted_index) == 2_500
    assert await redis_client.scard(keys.index) == 2_500  # still there for older versions


async def test_ids_an_older_version_writes_meanwhile_are_listed_from_the_next_first_page(
    redis_client: Redis,
) -> None:
    keys = RedisKeys(unique_prefix())
    store = RedisCollectionStore(redis_client, keys, wait_replicas=0, wait_ms=250)
    await store.save(CollectionId("new-1"), ())
    assert await store.ids(None, 10) == Success(("new-1",))

    await deploy_before_paging(redis_client, keys, ["old-1"])  # an older worker, mid-rollout

    assert await store.ids(None, 10) == Success(("new-1", "old-1"))
    await store.delete(CollectionId("old-1"))
    assert await store.ids(None, 10) == Success(("new-1",))
    assert await redis_client.smembers(keys.index) == {b"new-1"}  # older versions see the same


async def test_an_indexed_id_without_its_collection_is_skipped_and_the_page_still_holds_limit_ids(
    redis_client: Redis,
) -> None:
    keys = RedisKeys(unique_prefix())
    store = RedisCollectionStore(redis_client, keys, wait_replicas=0, wait_ms=250)
    for name in ("a", "c", "e", "f"):
        await store.save(CollectionId(name), ())
    # What a save racing a delete of the same id can leave: the index entry, no collection.
    await redis_client.sadd(keys.index, "b", "d")
    await redis_client.zadd(keys.sorted_index, {"b": 0, "d": 0})

    assert await store.ids(None, 2) == Success(("a", "c"))
    assert await store.ids(CollectionId("a"), 3) == Success(("c", "e", "f"))
    assert await store.ids(None, 10) == Success(("a", "c", "e", "f"))


def test_with_100_000_ids_in_redis_every_page_of_1_000_answers_fast_and_all_are_listed(
    redis_url: str, tmp_path: Path
) -> None:
    """The unpaginated listing answered 503 from 100,000 ids on (one EXISTS each, 0.5 s timeout)."""
    prefix = unique_prefix()
    deployed = [f"c{n:06d}" for n in range(100_000)]

    async def deploy() -> None:
        client = Redis.from_url(redis_url)
        try:
            await deploy_before_paging(client, RedisKeys(prefix), deployed)
        finally:
            await client.aclose()

    asyncio.run(deploy())
    env = {
        "INFLUENCER_STATS_VIDEO_CLIENT": "fake",
        "REDIS_URL": redis_url,
        "INFLUENCER_STATS_REDIS_PREFIX": prefix,
    }
    with (
        running_service(profile_args("distributed"), tmp_path / "service.log", env=env) as service,
        httpx.Client(base_url=service.url, timeout=30) as http,
    ):
        first = http.get("/collections")  # copies the 100,000 ids into the sorted set first
        assert first.status_code == 200, first.text
        assert first.json()["ids"] == deployed[:100]

        listed: list[str] = []
        slowest = 0.0
        query = "limit=1000"
        for _ in range(200):  # bounded
            started = time.monotonic()
            response = http.get(f"/collections?{query}")
            slowest = max(slowest, time.monotonic() - started)
            assert response.status_code == 200, response.text
            body = response.json()
            listed.extend(body["ids"])
            if "next" not in body:
                break
            query = f"limit=1000&cursor={body['next']}"

    assert listed == deployed
    assert slowest < 0.5, f"the slowest page of 1,000 took {slowest:.3f} s"
