"""What the root does because of a choice's declarations (``registry.Entry``), on a real Redis.

``bumps_versions`` (the redis store and stats cache bump a collection's version on each write)
decides whether the near-cache bumps it too; ``shared`` (the redis store) with a
``per_process`` stats cache is warned about at start-up. The root reads the entries, never the
names (``test_house``); these say the declarations are the right ones.
"""

from __future__ import annotations

import io

import orjson
import pytest
from redis.asyncio import Redis

from influencer_stats.bootstrap.root import open_http_api
from influencer_stats.config.resolve import resolve
from influencer_stats.domain.models import CollectionId
from influencer_stats.interpreters.redis_keys import RedisKeys
from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from tests.shared_redis import shared_redis_url, unique_prefix

COLLECTION = CollectionId("declared")


async def _bumps_of_one_write(store: str, cache: str) -> int:
    """How far one save through the API's store moves the collection's Redis version."""
    environ = {"REDIS_URL": shared_redis_url(), "INFLUENCER_STATS_REDIS_PREFIX": unique_prefix()}
    settings = resolve(environ, {"logger": "silent", "metrics": "none", "store": store, "cache": cache})
    async with open_http_api(settings, io.BytesIO()) as api:
        await api.store.save(COLLECTION, (synthetic_video_id(1),))
    client: Redis = Redis.from_url(shared_redis_url())
    try:
        version = await client.get(RedisKeys(settings.redis_prefix).version(COLLECTION))
    finally:
        await client.aclose()
    return 0 if version is None else int(version)


@pytest.mark.parametrize(
    ("store", "below"),
    [("redis", "none"), ("redis", "redis"), ("dict", "none"), ("dict", "redis"), ("dict", "stats")],
)
async def test_the_near_cache_bumps_a_version_only_where_nothing_below_it_does(
    store: str, below: str
) -> None:
    without = await _bumps_of_one_write(store, below)
    near = await _bumps_of_one_write(store, "near" if below == "none" else f"near,{below}")

    assert near == max(1, without)  # every worker's near-cache hears the write, and hears it once


@pytest.mark.parametrize(
    ("store", "cache", "warned"),
    [
        ("redis", "stats", True),
        ("redis", "redis,stats", True),
        ("redis", "redis", False),
        ("dict", "stats", False),
    ],
)
async def test_a_per_process_stats_cache_over_a_shared_store_is_warned_about(
    store: str, cache: str, warned: bool
) -> None:
    environ = {"REDIS_URL": shared_redis_url(), "INFLUENCER_STATS_REDIS_PREFIX": unique_prefix()}
    settings = resolve(environ, {"logger": "all", "metrics": "none", "store": store, "cache": cache})
    stdout = io.BytesIO()
    async with open_http_api(settings, stdout):
        pass
    events = [orjson.loads(line).get("event") for line in stdout.getvalue().splitlines()]

    assert ("config.single_process_cache" in events) is warned
    assert "service.started" in events
