"""The Redis quota count recounted when Redis loses it (issue 33, item 4), on a real Redis: the
ledger's script against what a restart without persistence (the key gone), a failover to a replica
behind (the count lower) and the former script's count (a string) leave. Each process is a ledger
of its own; the service end to end, a real Redis restarted: test_quota_redis.py."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis
from returns.result import Failure, Success

from influencer_stats.interpreters.quota.quota_redis import RedisQuotaLedger
from influencer_stats.interpreters.redis_keys import RedisKeys
from influencer_stats.testing.event_log import CapturingEventLog
from tests.shared_redis import closing_client, shared_redis_url, unique_prefix

DAY, NEXT_DAY = "2026-12-05", "2026-12-06"
KEEP_S = 3600


@pytest.fixture
async def client() -> AsyncIterator[Redis]:
    redis = closing_client(shared_redis_url())
    yield redis
    await redis.aclose()


@pytest.fixture
def keys() -> RedisKeys:
    return RedisKeys(unique_prefix())


def ledger(client: Redis, keys: RedisKeys, hold_s: float = 0.0) -> RedisQuotaLedger:
    """A process's ledger (no hold unless asked: the recount's arithmetic alone)."""
    return RedisQuotaLedger(client, keys.quota, CapturingEventLog(), time.time, hold_s)


async def spend(process: RedisQuotaLedger, units: int, budget: int = 10, day: str = DAY) -> list[object]:
    return [(await process.take(day, budget, KEEP_S)).value_or("refused") for _ in range(units)]


async def test_a_count_redis_lost_is_re_seeded_with_what_the_process_saw(
    client: Redis, keys: RedisKeys
) -> None:
    process = ledger(client, keys)
    assert await spend(process, 3) == [1, 2, 3]

    await client.delete(keys.quota(DAY))  # Redis restarted without persistence

    assert await spend(process, 8) == [4, 5, 6, 7, 8, 9, 10, "refused"]


async def test_processes_each_knowing_part_re_seed_the_whole_count_beside_one_knowing_nothing(
    client: Redis, keys: RedisKeys
) -> None:
    one, two = ledger(client, keys), ledger(client, keys)
    assert await spend(one, 3) == [1, 2, 3]
    assert await spend(two, 2) == [4, 5]  # two saw 5; one last saw 3

    await client.delete(keys.quota(DAY))
    new = ledger(client, keys)  # a process started after the loss: it knows nothing
    assert await spend(new, 1) == [1]
    await one.note()  # brings 3: below what two will bring
    await two.note()  # brings 5, on top of new's unit

    assert int(await client.hget(keys.quota(DAY), "n") or 0) == 6  # 3 + 2 + 1, as spent
    assert await spend(one, 5) == [7, 8, 9, 10, "refused"]


async def test_a_re_seeded_count_spends_nothing_until_its_hold_ends(client: Redis, keys: RedisKeys) -> None:
    process = ledger(client, keys, hold_s=60.0)
    await spend(process, 2)
    await client.delete(keys.quota(DAY))

    held = await process.take(DAY, 10, KEEP_S)
    await client.hset(keys.quota(DAY), "hold", 0)  # the hold has passed
    after = await process.take(DAY, 10, KEEP_S)

    assert held == Failure("recounting")
    assert after == Success(3)


async def test_a_new_day_starts_from_nothing_and_holds_nothing(client: Redis, keys: RedisKeys) -> None:
    process = ledger(client, keys, hold_s=60.0)
    assert await spend(process, 3) == [1, 2, 3]

    assert await spend(process, 2, day=NEXT_DAY) == [1, 2]


async def test_a_failover_to_a_replica_behind_is_raised_back_to_the_count_seen(
    client: Redis, keys: RedisKeys
) -> None:
    process = ledger(client, keys)
    await spend(process, 4)

    await client.hset(keys.quota(DAY), "n", 2)  # the replica had not received the last two units

    assert await spend(process, 1) == [5]


async def test_a_count_the_former_script_kept_is_carried_over(client: Redis, keys: RedisKeys) -> None:
    await client.set(keys.quota(DAY), 7)  # a string, counted by a process of the former version

    assert await spend(ledger(client, keys), 4) == [8, 9, 10, "refused"]
    assert await client.ttl(keys.quota(DAY)) > 0


async def test_an_idle_process_re_seeds_the_count_on_its_own_every_interval(
    client: Redis, keys: RedisKeys
) -> None:
    process = ledger(client, keys)
    await spend(process, 3)
    await client.delete(keys.quota(DAY))
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) > 1:
            raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        await process.watch(1.0, sleep)

    assert sleeps == [1.0, 1.0]
    assert int(await client.hget(keys.quota(DAY), "n") or 0) == 3
