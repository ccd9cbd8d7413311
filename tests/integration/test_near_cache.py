"""The near-cache's invalidation feed (``KeyTracking``) and the near-cache over it, on a real Redis.

What the near-cache's correctness rests on: every change of a tracked key
reaches ``on_key``; anything that may lose one (the connection killed, the
data flushed, no answer within the lease) runs ``on_flush`` and turns
``live()`` false until a new connection is up; and the near-cache serves from
memory only while live, forgetting a collection whose version another client
bumps. (Two services on one Redis: test_distributed.py.)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator

import pytest
from redis.asyncio import Redis

from influencer_stats.domain.models import CollectionId
from influencer_stats.interpreters.metrics.noop import NoMetrics
from influencer_stats.interpreters.redis_keys import RedisKeys
from influencer_stats.interpreters.redis_topology import primaries
from influencer_stats.interpreters.stats.cache import CachePolicy
from influencer_stats.interpreters.stats_cache.near_cache import NearCachedStats
from influencer_stats.interpreters.stats_cache.tracking import KeyTracking
from influencer_stats.testing.clock import ManualClock
from influencer_stats.testing.event_log import CapturingEventLog
from influencer_stats.testing.stats_query import ScriptedStatsQuery, stats_of
from tests.containers import redis_server
from tests.shared_redis import unique_prefix
from tests.support import free_port

LEASE_S = 0.5
POLICY = CachePolicy(ttl_s=60, stale_while_revalidate_s=0, stale_if_error_s=0, max_entries=100)
ONE = CollectionId("one")


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    """A Redis of this module's own: one test flushes it."""
    with redis_server() as redis:
        yield redis.url


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[Redis]:
    redis = Redis.from_url(redis_url, socket_timeout=5)
    yield redis
    await redis.aclose()


class Feed:
    """What a ``KeyTracking`` told its callbacks."""

    def __init__(self) -> None:
        self.keys: list[bytes] = []
        self.flushes = 0

    def key(self, key: bytes) -> None:
        self.keys.append(key)

    def flush(self) -> None:
        self.flushes += 1


def tracking(
    client: Redis, prefix: str, feed: Feed, clock: ManualClock, log: CapturingEventLog
) -> KeyTracking:
    return KeyTracking(
        lambda: primaries(client),
        prefix,
        feed.key,
        feed.flush,
        auth=[],
        lease_s=LEASE_S,
        retry_s=LEASE_S,
        clock=clock,
        log=log,
    )


async def soon(done: Callable[[], object]) -> bool:
    """Whether ``done()`` turns true within a second: what Redis sends right after its reply to
    another client reaches this process a moment after that reply."""
    for _ in range(1_000):
        if done():
            return True
        await asyncio.sleep(0.001)
    return False


@pytest.fixture
def closing() -> Iterator[list[KeyTracking]]:
    """Trackings to close after the test."""
    opened: list[KeyTracking] = []
    yield opened
    for tracked in opened:
        tracked.close()


async def test_every_change_of_a_key_under_the_prefix_reaches_on_key_and_no_other(
    client: Redis, closing: list[KeyTracking]
) -> None:
    prefix, feed, log = unique_prefix(), Feed(), CapturingEventLog()
    tracked = tracking(client, f"{prefix}:ver:", feed, ManualClock(), log)
    closing.append(tracked)
    assert await tracked.connect() and tracked.live()

    await client.incr(f"{prefix}:ver:{{a}}")
    await client.set(f"{prefix}:stats:{{a}}", "x")  # not under the prefix
    await client.delete(f"{prefix}:ver:{{a}}")

    assert await soon(lambda: tracked.live() and len(feed.keys) == 2)
    assert feed.keys == [f"{prefix}:ver:{{a}}".encode()] * 2
    assert feed.flushes == 1  # on connecting: what came before may have missed writes
    tracked.live()
    assert [e.event for e in log.events] == ["stats.tracking_started"]


async def test_a_killed_tracking_connection_flushes_and_is_not_live_until_it_reconnects(
    client: Redis, closing: list[KeyTracking]
) -> None:
    feed, log = Feed(), CapturingEventLog()
    tracked = tracking(client, f"{unique_prefix()}:ver:", feed, ManualClock(), log)
    closing.append(tracked)
    assert await tracked.connect()

    killed = await client.client_kill_filter(_type="pubsub")
    assert await soon(lambda: not tracked.live())  # the close arrives right after CLIENT KILL's answer

    assert killed >= 1 and feed.flushes == 2
    assert not tracked.live()
    assert await tracked.connect() and tracked.live() and feed.flushes == 3
    assert [e.event for e in log.events] == [
        "stats.tracking_started",
        "stats.tracking_lost",
        "stats.tracking_started",
    ]


async def test_a_connection_that_has_not_answered_within_the_lease_lapses(
    client: Redis, closing: list[KeyTracking]
) -> None:
    feed, clock = Feed(), ManualClock(100.0)
    tracked = tracking(client, f"{unique_prefix()}:ver:", feed, clock, CapturingEventLog())
    closing.append(tracked)
    assert await tracked.connect()

    clock.now += LEASE_S * 0.9
    assert tracked.live()
    clock.now += LEASE_S * 0.2  # no PING answered since connecting (a frozen primary)

    assert not tracked.live() and feed.flushes == 2


async def test_a_flushed_database_flushes_the_feed(client: Redis, closing: list[KeyTracking]) -> None:
    feed = Feed()
    tracked = tracking(client, f"{unique_prefix()}:ver:", feed, ManualClock(), CapturingEventLog())
    closing.append(tracked)
    assert await tracked.connect()

    await client.flushdb()
    assert await soon(lambda: not tracked.live())

    assert feed.flushes == 2


async def test_no_redis_to_connect_to_is_not_live_and_says_so() -> None:
    dead = Redis(host="127.0.0.1", port=free_port(), socket_timeout=1, socket_connect_timeout=1)
    log = CapturingEventLog()
    tracked = tracking(dead, "p:", Feed(), ManualClock(), log)
    try:
        assert not await tracked.connect()
    finally:
        await dead.aclose()
    assert not tracked.live()
    assert [(e.event, e.fields["error"]) for e in log.events] == [
        ("stats.tracking_unavailable", "ConnectionRefusedError")
    ]


async def test_the_near_cache_serves_from_memory_while_live_and_forgets_what_another_worker_wrote(
    client: Redis, closing: list[KeyTracking]
) -> None:
    keys, inner, log = RedisKeys(unique_prefix()), ScriptedStatsQuery(), CapturingEventLog()
    near: list[NearCachedStats] = []
    tracked = KeyTracking(
        lambda: primaries(client),
        keys.version("")[:-2],
        lambda key: near[0].forget(CollectionId(key.decode().rsplit("{", 1)[1].rstrip("}"))),
        lambda: near[0].forget_all() if near else None,
        auth=[],
        lease_s=LEASE_S,
        retry_s=LEASE_S,
        clock=ManualClock(),
        log=log,
    )
    near.append(
        NearCachedStats(inner, client, keys.version, tracked.live, ManualClock(), log, POLICY, NoMetrics())
    )
    closing.append(tracked)
    assert await tracked.connect()

    assert (
        (await near[0].stats(ONE)).unwrap().stats == (await near[0].stats(ONE)).unwrap().stats == stats_of(1)
    )
    assert inner.calls == 1  # the second from memory
    inner.version = 2
    await client.incr(keys.version(ONE))  # a write through another worker
    assert await soon(lambda: tracked.live() and inner.calls == 1 and not near[0].holds(ONE))
    await near[0].stats(ONE)

    assert (await near[0].stats(ONE)).unwrap().stats == stats_of(2)  # kept again
    assert inner.calls == 2
    await near[0].invalidate(ONE)  # a write through this one: forgotten here, bumped for the others
    assert int(await client.get(keys.version(ONE)) or 0) == 2
    assert inner.invalidated == [ONE]
