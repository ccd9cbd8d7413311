"""The near-cache's own rules on a fake clock and a switchable feed: no Redis, no sleeps.

(The feed itself, and the near-cache over a real Redis and two services:
tests/integration/test_near_cache.py, test_distributed.py.)
"""

from __future__ import annotations

import asyncio
import socket

from influencer_stats.domain.models import CollectionId
from influencer_stats.interpreters.stats.cache import CachePolicy
from influencer_stats.interpreters.stats_cache.near_cache import NearCachedStats
from influencer_stats.interpreters.stats_cache.tracking import _Tracker
from influencer_stats.testing.clock import ManualClock
from influencer_stats.testing.event_log import CapturingEventLog
from influencer_stats.testing.stats_query import ScriptedStatsQuery, stats_of
from tests.support import RecordingMetrics

ONE, TWO = CollectionId("one"), CollectionId("two")
POLICY = CachePolicy(ttl_s=10, stale_while_revalidate_s=0, stale_if_error_s=0, max_entries=10)


class Feed:
    """Whether Redis's invalidations reach the process: the test says."""

    def __init__(self) -> None:
        self.up = True

    def live(self) -> bool:
        return self.up


def near(inner: ScriptedStatsQuery, feed: Feed, metrics: RecordingMetrics | None = None) -> NearCachedStats:
    return NearCachedStats(
        inner, None, str, feed.live, ManualClock(), CapturingEventLog(), POLICY, metrics or RecordingMetrics()
    )


async def test_while_the_feed_is_live_a_second_read_comes_from_memory() -> None:
    inner, metrics = ScriptedStatsQuery(), RecordingMetrics()
    cache = near(inner, Feed(), metrics)

    first, second = await cache.stats(ONE), await cache.stats(ONE)

    assert first.unwrap().stats == second.unwrap().stats == stats_of(1)
    assert inner.calls == 1 and cache.holds(ONE)
    assert metrics.cache_events == ["near_miss", "near_hit"]


async def test_while_the_feed_is_down_every_read_goes_to_redis_and_nothing_is_kept() -> None:
    inner, feed, metrics = ScriptedStatsQuery(), Feed(), RecordingMetrics()
    cache = near(inner, feed, metrics)
    feed.up = False

    await cache.stats(ONE)
    await cache.stats(ONE)

    assert inner.calls == 2 and not cache.holds(ONE)
    assert metrics.cache_events == ["near_off", "near_off"]


async def test_a_collection_forgotten_is_read_again_and_the_others_stay() -> None:
    inner = ScriptedStatsQuery()
    cache = near(inner, Feed())
    await cache.stats(ONE)
    await cache.stats(TWO)
    inner.version = 2

    cache.forget(ONE)  # another worker wrote it

    assert (await cache.stats(ONE)).unwrap().stats == stats_of(2)
    assert (await cache.stats(TWO)).unwrap().stats == stats_of(1)  # still from memory
    assert inner.calls == 3


async def test_a_read_under_way_when_its_collection_is_forgotten_keeps_nothing() -> None:
    inner = ScriptedStatsQuery()
    inner.gate = asyncio.Event()
    cache = near(inner, Feed())
    reading = asyncio.create_task(cache.stats(ONE))
    async with inner.called:
        await inner.called.wait_for(lambda: inner.calls == 1)

    cache.forget_all()  # the feed was lost while Redis answered from before a write
    inner.gate.set()
    await reading

    assert not cache.holds(ONE)


async def test_a_write_through_this_worker_forgets_here_and_tells_what_is_below() -> None:
    inner = ScriptedStatsQuery()
    cache = near(inner, Feed())
    await cache.stats(ONE)

    await cache.invalidate(ONE)  # client None: the Redis store or cache below bumps the version

    assert not cache.holds(ONE) and inner.invalidated == [ONE]


async def test_a_tracking_connection_the_server_closed_is_no_longer_watched_by_the_loop() -> None:
    """A closed socket stays readable: watched on, the loop would call ``drain`` on every turn."""
    loop = asyncio.get_running_loop()
    ours, server = socket.socketpair()
    ours.setblocking(False)
    tracker = _Tracker(ours, ManualClock(), lambda key: None)
    loop.add_reader(ours, tracker.drain)

    server.close()
    for _ in range(3):
        await asyncio.sleep(0)

    assert tracker.lost
    assert loop.remove_reader(ours) is False  # already removed
    tracker.close()
