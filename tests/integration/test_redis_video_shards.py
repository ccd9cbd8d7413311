"""The video cache spread over several slots (as on a Cluster), against a real Redis.

``RedisKeys(video_shards=n)`` puts each video's entry, claim and stale queue in
one of ``n`` slots; every script runs once per shard. Here on one server, which
runs them all: what must hold is that no video is lost or taken twice across
shards, and that each shard keeps ``room`` on its own. (The same interpreters on
a real Cluster: tests/integration/test_redis_cluster.py.)
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from influencer_stats.domain.models import VideoEntry, VideoId
from influencer_stats.interpreters.redis_keys import RedisKeys
from influencer_stats.interpreters.video_cache.video_cache_redis import (
    RedisMissClaims,
    RedisStaleQueue,
    RedisVideoEntries,
)
from influencer_stats.interpreters.videos.synthetic import synthetic_stats
from influencer_stats.testing.event_log import CapturingEventLog
from tests.shared_redis import shared_redis_url, unique_prefix

NOW, FRESH = 1_700_000_000.0, 10.0
SHARDS = 4


@pytest.fixture
async def client() -> AsyncIterator[Redis]:
    redis = Redis.from_url(shared_redis_url(), socket_timeout=5)
    yield redis
    await redis.aclose()


@pytest.fixture
def keys() -> RedisKeys:
    return RedisKeys(unique_prefix(), video_shards=SHARDS)


def ids_in_shards(keys: RedisKeys, per_shard: int) -> dict[str, list[VideoId]]:
    """``per_shard`` video ids in every shard."""
    found: dict[str, list[VideoId]] = {shard: [] for shard in keys.all_video_shards()}
    n = 0
    while any(len(ids) < per_shard for ids in found.values()):
        video_id = VideoId(f"{n:011d}")
        shard = found[keys.video_shard(video_id)]
        if len(shard) < per_shard:
            shard.append(video_id)
        n += 1
    return found


async def store(client: Redis, keys: RedisKeys, stored_at: float, *ids: VideoId) -> None:
    entries = RedisVideoEntries(client, keys.video, 60_000, CapturingEventLog(), decoded=100)
    await entries.put_many({i: VideoEntry(synthetic_stats(i), stored_at) for i in ids})


def test_the_videos_spread_over_every_shard_each_key_of_a_video_in_its_shards_slot() -> None:
    keys = RedisKeys("is", video_shards=SHARDS)
    shards = {keys.video_shard(VideoId(f"{n:011d}")) for n in range(200)}
    tag = keys.video_shard(VideoId("dQw4w9WgXcQ"))

    assert shards == set(keys.all_video_shards()) and len(shards) == SHARDS
    assert {keys.video("dQw4w9WgXcQ"), keys.video_claim("dQw4w9WgXcQ"), keys.stale_videos(tag)} == {
        f"is:video:{{{tag}}}:dQw4w9WgXcQ",
        f"is:claim:{{{tag}}}:dQw4w9WgXcQ",
        f"is:stale:{{{tag}}}",
    }
    assert RedisKeys("is").video("dQw4w9WgXcQ") == "is:video:{is:videos}:dQw4w9WgXcQ"  # one shard: as before


async def test_entries_of_every_shard_are_read_back_in_one_call(client: Redis, keys: RedisKeys) -> None:
    ids = [i for shard in ids_in_shards(keys, 2).values() for i in shard]
    await store(client, keys, NOW, *ids)
    entries = RedisVideoEntries(client, keys.video, 60_000, CapturingEventLog(), decoded=100)

    assert await entries.get_many(ids) == {i: VideoEntry(synthetic_stats(i), NOW) for i in ids}
    assert await entries.get_many([]) == {}


async def test_each_shard_keeps_its_own_room_and_a_push_that_fills_one_takes_only_its_videos(
    client: Redis, keys: RedisKeys
) -> None:
    first, second, *_ = ids_in_shards(keys, 2).values()
    q = RedisStaleQueue(client, keys, 2, 60_000, CapturingEventLog())

    assert await q.push([first[0], second[0]], NOW, FRESH) == []  # one in each: neither full
    assert sorted(await q.push([first[1]], NOW, FRESH)) == sorted(first)  # the first shard filled
    assert await q.take_due(NOW, NOW, FRESH) == ([second[0]], False)


async def test_take_gathers_up_to_room_across_shards_and_never_the_same_video_twice(
    client: Redis, keys: RedisKeys
) -> None:
    by_shard = ids_in_shards(keys, 1)
    queued = [i for shard in by_shard.values() for i in shard]
    one = RedisStaleQueue(client, keys, 50, 60_000, CapturingEventLog())
    other = RedisStaleQueue(client, keys, 50, 60_000, CapturingEventLog())
    await one.push(queued, NOW, FRESH)

    taken = await one.take(3, NOW, FRESH)
    rest, left = await other.take_due(NOW, NOW, FRESH)

    assert len(taken) == 3 and not left
    assert sorted([*taken, *rest]) == sorted(queued)


async def test_claims_in_several_shards_each_worker_its_own_and_settled_reads_them_all(
    client: Redis, keys: RedisKeys
) -> None:
    ids = [shard[0] for shard in ids_in_shards(keys, 1).values()]
    one = RedisMissClaims(client, keys, "one", 2_000, CapturingEventLog())
    other = RedisMissClaims(client, keys, "other", 2_000, CapturingEventLog())

    assert await one.claim(ids[:2], NOW, FRESH) == []
    assert sorted(await other.claim(ids, NOW, FRESH)) == sorted(ids[:2])  # the rest are other's now
    await store(client, keys, NOW, ids[0])
    await one.release(ids)  # its own only

    assert await other.settled(ids) == {ids[0]: VideoEntry(synthetic_stats(ids[0]), NOW), ids[1]: None}
