"""The Redis collection sources against a real Redis: its key layout, what expires and what does not."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from influencer_stats.domain.models import CollectionId, CollectionSource, KeptSource, Revision
from influencer_stats.interpreters.redis_keys import RedisKeys
from influencer_stats.interpreters.sources.redis import RedisCollectionSources
from tests.shared_redis import shared_redis_url, unique_prefix

ONE = CollectionId("one")


@pytest.fixture
async def client() -> AsyncIterator[Redis]:
    redis = Redis.from_url(shared_redis_url(), socket_timeout=5)
    yield redis
    await redis.aclose()


async def test_a_source_is_one_string_that_never_expires_and_a_claim_expires_after_its_keep(
    client: Redis,
) -> None:
    keys = RedisKeys(unique_prefix())
    sources = RedisCollectionSources(client, keys, claim_keep_s=60.0)

    await sources.put(ONE, KeptSource(CollectionSource("playlist", "PL123"), Revision("ab12")))
    await sources.claim(ONE, 4)

    assert keys.source(ONE) == f"{keys.prefix}:source:{{one}}"
    assert await client.get(keys.source(ONE)) == b"playlist:PL123"  # as versions before revisions read it
    assert await client.get(keys.source_revision(ONE)) == b"ab12"
    assert await client.pttl(keys.source_revision(ONE)) == -1
    assert await client.pttl(keys.source(ONE)) == -1  # kept until forgotten
    assert 59_000 < await client.pttl(keys.source_claim(ONE)) <= 60_000  # claims do not accumulate

    await sources.put(ONE, None)

    assert await client.exists(keys.source(ONE), keys.source_revision(ONE), keys.source_claim(ONE)) == 0
