"""The Redis stale queue and miss claims against a real Redis: what workers sharing them rely on."""

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
from tests.support import free_port

A, B, C, D = (VideoId(c * 11) for c in "abcd")
NOW, FRESH = 1_700_000_000.0, 10.0


@pytest.fixture
async def client() -> AsyncIterator[Redis]:
    redis = Redis.from_url(shared_redis_url(), socket_timeout=5)
    yield redis
    await redis.aclose()


def queue(client: Redis, keys: RedisKeys, room: int = 3) -> RedisStaleQueue:
    return RedisStaleQueue(client, keys, room, 60_000, CapturingEventLog())


async def store(client: Redis, keys: RedisKeys, stored_at: float, *ids: VideoId) -> None:
    entries = RedisVideoEntries(client, keys.video, 60_000, CapturingEventLog(), decoded=100)
    await entries.put_many({i: VideoEntry(synthetic_stats(i), stored_at) for i in ids})


async def test_two_workers_pushing_one_video_queue_it_once_and_a_calls_worth_comes_out_once(
    client: Redis,
) -> None:
    keys = RedisKeys(unique_prefix())
    one, other = queue(client, keys), queue(client, keys)
    await store(client, keys, NOW - 15, A, B, C)  # stale

    assert await one.push([A, B], NOW, FRESH) == []
    assert await other.push([A, B], NOW, FRESH) == []  # the same videos: queued once
    assert sorted(await other.push([C], NOW, FRESH)) == [A, B, C]  # three wait: out they come
    assert await one.take(3, NOW, FRESH) == []


async def test_a_video_is_queued_only_while_its_entry_is_stale_or_absent(client: Redis) -> None:
    keys = RedisKeys(unique_prefix())
    q = queue(client, keys, room=50)
    await store(client, keys, NOW - 2, A)  # fresh: another worker refreshed it meanwhile
    await store(client, keys, NOW - 15, B)

    await q.push([A, B, C], NOW, FRESH)  # C has no entry at all

    assert sorted(await q.take(50, NOW, FRESH)) == [B, C]


async def test_taken_videos_that_another_worker_refreshed_since_they_were_queued_are_dropped(
    client: Redis,
) -> None:
    keys = RedisKeys(unique_prefix())
    q = queue(client, keys, room=50)
    await store(client, keys, NOW - 15, A, B)
    await q.push([A, B], NOW, FRESH)
    await store(client, keys, NOW + 1, A)  # refreshed by a call of another worker

    assert await q.take(50, NOW + 2, FRESH) == [B]


async def test_take_due_takes_all_once_the_oldest_was_queued_by_the_cutoff_and_says_what_is_left(
    client: Redis,
) -> None:
    keys = RedisKeys(unique_prefix())
    q = queue(client, keys, room=3)
    assert await q.take_due(NOW, NOW, FRESH) == ([], False)
    await q.push([A], NOW + 1, FRESH)

    assert await q.take_due(NOW, NOW + 1, FRESH) == ([], True)  # queued after the cutoff
    await q.push([B], NOW + 2, FRESH)
    assert await q.take_due(NOW + 1.5, NOW + 3, FRESH) == ([A, B], False)  # B rides along


async def test_redis_unreachable_a_push_hands_the_videos_back_and_a_take_takes_nothing() -> None:
    dead = Redis(host="127.0.0.1", port=free_port(), socket_timeout=1, socket_connect_timeout=1)
    log = CapturingEventLog()
    q = RedisStaleQueue(dead, RedisKeys(unique_prefix()), 50, 60_000, log)
    try:
        assert await q.push([A, B], NOW, FRESH) == [A, B]  # refresh them now rather than never
        assert await q.take(50, NOW, FRESH) == []
        assert await q.take_due(NOW, NOW, FRESH) == ([], False)
    finally:
        await dead.aclose()
    assert [e.event for e in log.events] == ["videos.stale_queue_unavailable"] * 3


def claims(client: Redis, keys: RedisKeys, token: str, hold_ms: int = 2_000) -> RedisMissClaims:
    return RedisMissClaims(client, keys, token, hold_ms, CapturingEventLog())


async def test_two_workers_missing_one_video_only_the_first_claims_it_and_each_releases_only_its_own(
    client: Redis,
) -> None:
    keys = RedisKeys(unique_prefix())
    one, other = claims(client, keys, "one"), claims(client, keys, "other")

    assert await one.claim([A, B], NOW, FRESH) == []
    assert await other.claim([B, C], NOW, FRESH) == [B]
    assert await one.claim([A, C], NOW, FRESH) == [C]  # A is its own already
    await other.release([A, B, C])  # only C is the other's
    assert await one.claim([A, B], NOW, FRESH) == []
    assert await client.exists(keys.video_claim(C)) == 0

    await one.release([A, B])
    assert await other.claim([A, B], NOW, FRESH) == []


async def test_settled_gives_the_videos_no_longer_claimed_with_their_entries_or_none(client: Redis) -> None:
    keys = RedisKeys(unique_prefix())
    one, other = claims(client, keys, "one"), claims(client, keys, "other")
    await one.claim([A, B, C], NOW, FRESH)
    assert await other.settled([A, B, C, D]) == {D: None}  # D: nobody claims it, nothing stored

    await store(client, keys, NOW, A)
    await one.release([A, B])  # A was stored, B's call failed

    assert await other.settled([A, B, C]) == {A: VideoEntry(synthetic_stats(A), NOW), B: None}


async def test_a_video_stored_fresh_since_it_was_read_is_not_claimed_but_a_due_one_is(client: Redis) -> None:
    keys = RedisKeys(unique_prefix())
    await store(client, keys, NOW - 1, A)  # another worker's call brought it meanwhile
    await store(client, keys, NOW - 30, B)  # due

    assert await claims(client, keys, "one").claim([A, B, C], NOW, FRESH) == [A]
    assert await client.exists(keys.video_claim(A)) == 0
    assert await client.exists(keys.video_claim(B), keys.video_claim(C)) == 2


async def test_a_claim_lapses_after_its_hold_even_if_its_worker_never_releases_it(client: Redis) -> None:
    keys = RedisKeys(unique_prefix())
    await claims(client, keys, "one", hold_ms=1_500).claim([A], NOW, FRESH)

    assert 0 < await client.pttl(keys.video_claim(A)) <= 1_500


async def test_redis_unreachable_a_claim_claims_nothing_and_a_release_is_dropped() -> None:
    dead = Redis(host="127.0.0.1", port=free_port(), socket_timeout=1, socket_connect_timeout=1)
    log = CapturingEventLog()
    c = RedisMissClaims(dead, RedisKeys(unique_prefix()), "one", 2_000, log)
    try:
        assert await c.claim([A, B], NOW, FRESH) == []  # this worker calls for them all
        await c.release([A, B])
        assert await c.settled([A, B]) == {}  # nothing settles: waiters wait out their polls
    finally:
        await dead.aclose()
    assert [e.event for e in log.events] == ["videos.claims_unavailable"] * 3
