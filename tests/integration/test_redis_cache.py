"""The Redis stats cache against a real Redis, on a fake clock: no sleeps.

Two ``RedisCachedStats`` on one Redis and one key prefix stand for two worker
processes.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from redis.asyncio import Redis
from returns.result import Failure, Success

from influencer_stats.domain.models import CacheInfo, CollectionNotFound, StatsAnswer, UpstreamUnavailable
from influencer_stats.interpreters.collections.redis_store import RedisCollectionStore
from influencer_stats.interpreters.metrics.noop import NoMetrics
from influencer_stats.interpreters.redis_keys import RedisKeys
from influencer_stats.interpreters.stats.cache import InvalidatingStore
from influencer_stats.interpreters.stats_cache.redis_cache import RedisCachedStats
from influencer_stats.interpreters.videos.fake import FakeVideoStatsSource
from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from influencer_stats.logic.service import GetStats
from influencer_stats.testing.clock import ManualClock
from influencer_stats.testing.event_log import CapturingEventLog
from influencer_stats.testing.stats_query import ScriptedStatsQuery as Inner
from influencer_stats.testing.stats_query import stats_of
from tests.integration.redis_cache_support import ONE, POLICY, cache_info, impressions, settle, started
from tests.shared_redis import shared_redis_url, unique_prefix
from tests.support import RecordingMetrics, free_port


@pytest.fixture
async def client() -> AsyncIterator[Redis]:
    redis = Redis.from_url(shared_redis_url(), socket_timeout=5)
    yield redis
    await redis.aclose()


@pytest.fixture
def prefix() -> str:
    return unique_prefix()


async def test_a_miss_computes_and_the_next_call_is_a_fresh_hit(client: Redis, prefix: str) -> None:
    inner, clock = Inner(), ManualClock(1_700_000_000.0)
    cache = RedisCachedStats(
        inner, client, clock, CapturingEventLog(), POLICY, NoMetrics(), RedisKeys(prefix)
    )

    first = await cache.stats(ONE)
    clock.now += 3
    second = await cache.stats(ONE)

    assert inner.calls == 1
    assert cache_info(first) == CacheInfo(False, 0.0, 10)
    assert cache_info(second) == CacheInfo(True, 3, 7)
    assert impressions(second) == 1


async def test_an_entry_expires_after_the_ttl_and_the_longest_stale_window_the_counter_never(
    client: Redis, prefix: str
) -> None:
    cache = RedisCachedStats(
        Inner(),
        client,
        ManualClock(1_700_000_000.0),
        CapturingEventLog(),
        POLICY,
        NoMetrics(),
        RedisKeys(prefix),
    )

    await cache.stats(ONE)

    assert 309_000 < await client.pttl(f"{prefix}:stats:{{one}}") <= 310_000
    assert await client.pttl(f"{prefix}:ver:{{one}}") == -2  # no write yet: no counter
    await cache.invalidate(ONE)
    assert await client.pttl(f"{prefix}:ver:{{one}}") == -1  # a counter never expires


class CountingRedis(Redis):
    """Counts the MGETs that have returned."""

    mgets = 0
    mget_returned = asyncio.Condition()

    async def mget(self, *args: Any, **kwargs: Any) -> Any:
        result = await super().mget(*args, **kwargs)
        async with self.mget_returned:
            self.mgets += 1
            self.mget_returned.notify_all()
        return result


async def test_concurrent_misses_in_one_process_share_one_computation(prefix: str) -> None:
    inner, clock = Inner(), ManualClock(1_700_000_000.0)
    inner.gate = asyncio.Event()
    client = CountingRedis.from_url(shared_redis_url(), socket_timeout=5)
    assert isinstance(client, CountingRedis)
    cache = RedisCachedStats(
        inner, client, clock, CapturingEventLog(), POLICY, NoMetrics(), RedisKeys(prefix)
    )

    waiting = [asyncio.create_task(cache.stats(ONE)) for _ in range(50)]
    async with asyncio.timeout(5), client.mget_returned:  # a caller joins as soon as its read returns
        await client.mget_returned.wait_for(lambda: client.mgets == 50)
    inner.gate.set()
    results = await asyncio.gather(*waiting)

    await client.aclose()

    assert inner.calls == 1
    assert {impressions(r) for r in results} == {1}


async def test_after_the_ttl_the_stale_value_is_served_while_one_refresh_runs(
    client: Redis, prefix: str
) -> None:
    inner, clock = Inner(), ManualClock(1_700_000_000.0)
    cache = RedisCachedStats(
        inner, client, clock, CapturingEventLog(), POLICY, NoMetrics(), RedisKeys(prefix)
    )
    await cache.stats(ONE)
    inner.version = 2
    inner.gate = asyncio.Event()  # the refresh stays in flight until released
    clock.now += 15

    stale = [await cache.stats(ONE) for _ in range(5)]
    inner.gate.set()
    await settle()
    fresh = await cache.stats(ONE)

    assert [impressions(r) for r in stale] == [1] * 5
    assert cache_info(stale[0]) == CacheInfo(True, 15, -5, "revalidating")
    assert inner.calls == 2  # one refresh for five stale reads
    assert impressions(fresh) == 2
    assert cache_info(fresh).hit


async def test_past_the_stale_while_revalidate_window_callers_wait_for_a_new_value(
    client: Redis, prefix: str
) -> None:
    inner, clock = Inner(), ManualClock(1_700_000_000.0)
    cache = RedisCachedStats(
        inner, client, clock, CapturingEventLog(), POLICY, NoMetrics(), RedisKeys(prefix)
    )
    await cache.stats(ONE)
    inner.version = 2
    clock.now += 10 + 30 + 1

    assert impressions(await cache.stats(ONE)) == 2


async def test_when_the_upstream_fails_a_recent_value_is_served_marked_stale_if_error(
    client: Redis, prefix: str
) -> None:
    inner, clock, log = Inner(), ManualClock(1_700_000_000.0), CapturingEventLog()
    cache = RedisCachedStats(inner, client, clock, log, POLICY, NoMetrics(), RedisKeys(prefix))
    await cache.stats(ONE)
    inner.failure = UpstreamUnavailable("500 backendError")
    clock.now += 100

    result = await cache.stats(ONE)

    assert impressions(result) == 1
    assert cache_info(result) == CacheInfo(True, 100, -90, "stale-if-error")
    assert [e.fields["age_s"] for e in log.named("stats.stale_if_error")] == [100]


async def test_past_the_stale_if_error_window_the_failure_is_returned(client: Redis, prefix: str) -> None:
    inner, clock = Inner(), ManualClock(1_700_000_000.0)
    cache = RedisCachedStats(
        inner, client, clock, CapturingEventLog(), POLICY, NoMetrics(), RedisKeys(prefix)
    )
    await cache.stats(ONE)
    inner.failure = UpstreamUnavailable("500 backendError")
    clock.now += 10 + 300 + 1

    assert await cache.stats(ONE) == Failure(UpstreamUnavailable("500 backendError"))


async def test_not_found_is_never_served_stale(client: Redis, prefix: str) -> None:
    inner, clock = Inner(), ManualClock(1_700_000_000.0)
    cache = RedisCachedStats(
        inner, client, clock, CapturingEventLog(), POLICY, NoMetrics(), RedisKeys(prefix)
    )
    await cache.stats(ONE)
    inner.failure = CollectionNotFound(ONE)
    clock.now += 50  # past ttl + swr: a real miss

    assert await cache.stats(ONE) == Failure(CollectionNotFound(ONE))


async def test_an_entry_from_before_a_write_is_not_served_even_when_the_upstream_fails(
    client: Redis, prefix: str
) -> None:
    inner, clock = Inner(), ManualClock(1_700_000_000.0)
    cache = RedisCachedStats(
        inner, client, clock, CapturingEventLog(), POLICY, NoMetrics(), RedisKeys(prefix)
    )
    await cache.stats(ONE)

    await cache.invalidate(ONE)
    inner.failure = UpstreamUnavailable("down")

    assert await cache.stats(ONE) == Failure(UpstreamUnavailable("down"))


async def test_every_read_is_recorded_as_a_cache_event_as_the_in_process_cache_does(
    client: Redis, prefix: str
) -> None:
    inner, clock, metrics = Inner(), ManualClock(1_700_000_000.0), RecordingMetrics()
    cache = RedisCachedStats(inner, client, clock, CapturingEventLog(), POLICY, metrics, RedisKeys(prefix))

    await cache.stats(ONE)  # miss
    await cache.stats(ONE)  # hit
    clock.now += 15
    await cache.stats(ONE)  # stale, refreshed in the background
    await settle()
    inner.failure = UpstreamUnavailable("500 backendError")
    clock.now += 100
    await cache.stats(ONE)  # miss, then the stale entry in place of the failure

    assert metrics.cache_events == ["miss", "hit", "stale", "miss", "stale_if_error"]


class Worker:
    """One worker process's wiring: its own cache object over the shared Redis."""

    def __init__(self, client: Redis, prefix: str, clock: ManualClock) -> None:
        store = RedisCollectionStore(client, RedisKeys(prefix), wait_replicas=0, wait_ms=250)
        log = CapturingEventLog()
        self.stats = RedisCachedStats(
            GetStats(store, FakeVideoStatsSource(), log),
            client,
            clock,
            log,
            POLICY,
            NoMetrics(),
            RedisKeys(prefix),
        )
        self.store = InvalidatingStore(store, self.stats)

    async def videos(self) -> int:
        return (await self.stats.stats(ONE)).unwrap().stats.videos


async def test_a_write_through_one_worker_is_never_followed_by_a_stale_answer_from_another(
    client: Redis, prefix: str
) -> None:
    clock = ManualClock(1_700_000_000.0)  # frozen: every entry stays fresh, only versions can retire it
    a, b = Worker(client, prefix, clock), Worker(client, prefix, clock)
    await a.store.save(ONE, (synthetic_video_id(0),))
    assert await b.videos() == 1
    shared = await a.stats.stats(ONE)
    assert cache_info(shared).hit  # computed by b, served to a: one cache

    for n in range(2, 12):
        writer, reader = (a, b) if n % 2 else (b, a)
        await writer.store.save(ONE, tuple(synthetic_video_id(k) for k in range(n)))
        assert await reader.videos() == n
        assert await writer.videos() == n

    await b.store.delete(ONE)
    assert await a.stats.stats(ONE) == Failure(CollectionNotFound(ONE))


async def test_a_write_to_the_redis_store_retires_cached_stats_even_if_nobody_invalidates(
    client: Redis, prefix: str
) -> None:
    clock = ManualClock(1_700_000_000.0)  # frozen: only the version can retire an entry
    worker = Worker(client, prefix, clock)
    await worker.store.save(ONE, (synthetic_video_id(0),))
    assert await worker.videos() == 1

    # As if the process died between the write and its invalidation: the raw store only.
    await RedisCollectionStore(client, RedisKeys(prefix), wait_replicas=0, wait_ms=250).save(
        ONE, (synthetic_video_id(1), synthetic_video_id(2))
    )

    assert await worker.videos() == 2


async def test_a_computation_that_raced_a_write_in_another_worker_is_never_served(
    client: Redis, prefix: str
) -> None:
    inner, clock = Inner(), ManualClock(1_700_000_000.0)
    inner.gate = asyncio.Event()
    log = CapturingEventLog()
    worker_a = RedisCachedStats(inner, client, clock, log, POLICY, NoMetrics(), RedisKeys(prefix))
    worker_b = RedisCachedStats(Inner(), client, clock, log, POLICY, NoMetrics(), RedisKeys(prefix))
    slow_read = asyncio.create_task(worker_a.stats(ONE))
    await started(inner, 1)  # worker a computes from version 1 of the data

    inner.version = 2
    await worker_b.invalidate(ONE)  # the write, acknowledged by worker b
    inner.gate.set()

    assert impressions(await slow_read) == 1  # began before the write: may see the old value
    after = await worker_a.stats(ONE)
    assert impressions(after) == 2
    assert cache_info(after).hit is False  # the raced entry was stored, under a retired version
    assert inner.calls == 2


async def test_a_computation_started_before_a_local_write_is_never_joined_after_it(
    client: Redis, prefix: str
) -> None:
    inner, clock = Inner(), ManualClock(1_700_000_000.0)
    inner.gate = asyncio.Event()
    cache = RedisCachedStats(
        inner, client, clock, CapturingEventLog(), POLICY, NoMetrics(), RedisKeys(prefix)
    )
    before_write = asyncio.create_task(cache.stats(ONE))
    await started(inner, 1)

    inner.version = 2
    await cache.invalidate(ONE)
    after_write = asyncio.create_task(cache.stats(ONE))
    await started(inner, 2)  # a second computation, not the first one joined
    inner.gate.set()

    assert impressions(await before_write) == 1
    assert impressions(await after_write) == 2
    assert impressions(await cache.stats(ONE)) == 2
    assert inner.calls == 2


async def test_an_entry_this_release_cannot_read_is_a_miss(client: Redis, prefix: str) -> None:
    inner = Inner()
    cache = RedisCachedStats(
        inner,
        client,
        ManualClock(1_700_000_000.0),
        CapturingEventLog(),
        POLICY,
        NoMetrics(),
        RedisKeys(prefix),
    )
    await client.set(f"{prefix}:stats:{{one}}", b'{"version": 0, "format": "next"}')

    assert cache_info(await cache.stats(ONE)).hit is False
    assert inner.calls == 1


@pytest.fixture(params=["refused", "hung"])
def broken_redis_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """Nothing listens (connection refused), or a socket that accepts and never answers."""
    if request.param == "refused":
        yield f"redis://127.0.0.1:{free_port()}"
        return
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield f"redis://127.0.0.1:{server.getsockname()[1]}"


async def test_when_redis_fails_the_cache_falls_back_to_the_inner_query(broken_redis_url: str) -> None:
    inner, log, metrics = Inner(), CapturingEventLog(), RecordingMetrics()
    broken = Redis.from_url(broken_redis_url, socket_timeout=0.2, socket_connect_timeout=0.2)
    cache = RedisCachedStats(
        inner, broken, ManualClock(1_700_000_000.0), log, POLICY, metrics, RedisKeys("is")
    )
    try:
        first = await cache.stats(ONE)
        await cache.invalidate(ONE)  # must not raise either
        second = await cache.stats(ONE)
    finally:
        await broken.aclose()

    assert first == second == Success(StatsAnswer(stats_of(1)))  # uncached: no cache info
    assert inner.calls == 2
    assert metrics.cache_events == ["miss", "miss"]
    assert [e.level for e in log.named("stats.cache_unavailable")] == ["warning", "warning"]
    assert [e.level for e in log.named("stats.cache_invalidate_failed")] == ["error"]
    assert broken_redis_url.rsplit(":", 1)[1] not in repr(log.events)  # no address in any event
