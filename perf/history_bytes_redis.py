"""The Redis history's measure for perf/history_bytes.py (the joint ``history__redis``'s file):
MEMORY USAGE of its keys summed, on a redis-server started here (loopback, no persistence)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import redis.asyncio as aioredis

from influencer_stats.interpreters.history.redis import RedisStatsHistory
from influencer_stats.interpreters.redis_keys import RedisKeys, as_text
from perf.history_bytes import Measure, read_back
from perf.history_feed import Plan, collection_id, feed
from perf.procs import HOST
from perf.redis_server import redis_process


async def measure_all(
    plan: Plan, feeds: list[tuple[str, int]], keep: int, out: Path, done: Callable[[Measure], None]
) -> None:
    """Each feed into one redis-server, flushed between them."""
    with redis_server(out) as port:
        for name, n in feeds:
            done(await measure_redis(plan, name, n, keep, port))


@contextmanager
def redis_server(out: Path) -> Iterator[int]:
    """A redis-server on loopback, no persistence, stopped by its PID; its port."""
    with redis_process(out / "redis.log") as port:
        yield port


async def measure_redis(plan: Plan, name: str, collections: int, keep: int, port: int) -> Measure:
    client = aioredis.Redis(host=HOST, port=port)
    try:
        await client.flushall()
        await client.script_flush()
        await client.config_resetstat()
        before = await _dataset_bytes(client)
        keys = RedisKeys(f"hb-{name.replace(' ', '-')}")
        history = RedisStatsHistory(client, keys, plan.retention)
        started = time.monotonic()
        records = await feed(history, plan, collections, name == "settled")
        seconds = time.monotonic() - started
        usage = 0
        encodings: set[str] = set()
        for index in range(collections):
            for key in (keys.history(collection_id(index)), keys.history_claim(collection_id(index))):
                usage += int(await client.memory_usage(key, samples=0) or 0)
            encodings.add(as_text(await client.object("encoding", keys.history(collection_id(index)))))
        delta = await _dataset_bytes(client) - before
        evals = (await client.info("commandstats")).get("cmdstat_eval", {})
        measure = Measure("redis", name, collections, records, seconds, usage, "MEMORY USAGE, summed")
        measure.notes.append(
            f"used_memory_dataset delta {delta:,} B ({delta / collections:,.0f} B per collection); "
            f"history encodings {sorted(encodings)}; EVAL {evals.get('usec_per_call', '?')} µs per call"
            " of Redis's time"
        )
        await read_back(history, plan, measure, keep)
        return measure
    finally:
        await client.aclose()


async def _dataset_bytes(client: aioredis.Redis) -> int:
    info = await client.info("memory")
    return int(info["used_memory_dataset"])
