"""The overlap lab's world and load: the collections, the requests, and the clients asking them.

The world is deterministic from its seed (``world``): ``Shape.collections`` collections of
``Shape.sizes`` ids drawn with Zipf popularity from ``Shape.pool`` videos, and the requests
picking collections with Zipf popularity; ``World.floor`` is what no cache can spend less
than on it. ``load`` asks them open loop at a rate, or in a closed loop of clients
(:mod:`perf.overlap` runs it against each variant).
"""

from __future__ import annotations

import asyncio
import bisect
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Final

import aiohttp

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from perf.procs import LabError

POOL: Final = 20_000
COLLECTIONS: Final = 2_000
SIZES: Final = (20, 500)
VIDEO_ZIPF: Final = 1.1
REQUEST_ZIPF: Final = 1.0
IDS_PER_CALL: Final = 50


@dataclass(frozen=True, slots=True)
class Shape:
    """What the world is made of: ``pool`` videos, ``collections`` of ``sizes`` ids each."""

    pool: int = POOL
    collections: int = COLLECTIONS
    sizes: tuple[int, int] = SIZES


@dataclass(frozen=True, slots=True)
class World:
    collections: dict[str, tuple[str, ...]]
    requests: tuple[str, ...]

    def floor(self) -> float:
        """Units per 1,000 requests no cache can go below: the distinct videos the requests ask
        for, 50 to a call (each fetched once)."""
        asked = {v for name in set(self.requests) for v in self.collections[name]}
        return 1000 * len(asked) / IDS_PER_CALL / max(1, len(self.requests))


def _zipf_weights(n: int, s: float) -> list[float]:
    return list(accumulate(1 / (rank**s) for rank in range(1, n + 1)))


def _draw(rng: random.Random, cumulative: Sequence[float]) -> int:
    return bisect.bisect_left(cumulative, rng.random() * cumulative[-1])


def world(seed: int, requests: int, shape: Shape = Shape()) -> World:
    """The collections and the request sequence, the same for every variant of a run."""
    rng = random.Random(seed)
    videos = _zipf_weights(shape.pool, VIDEO_ZIPF)
    collections: dict[str, tuple[str, ...]] = {}
    for n in range(shape.collections):
        size = min(rng.randint(*shape.sizes), shape.pool)
        chosen: dict[str, None] = {}
        while len(chosen) < size:
            chosen[str(synthetic_video_id(_draw(rng, videos)))] = None
        collections[f"campaign-{n:04d}"] = tuple(chosen)
    names = list(collections)
    ranks = _zipf_weights(len(names), REQUEST_ZIPF)
    return World(collections, tuple(names[_draw(rng, ranks)] for _ in range(requests)))


@dataclass(slots=True)
class Tally:
    latencies: list[float] = field(default_factory=list)
    ages: list[int] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    errors: int = 0
    counts: list[int] = field(default_factory=list)  # the double's call counter every --slice-s


async def put_collections(urls: Sequence[str], collections: dict[str, tuple[str, ...]]) -> None:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
        gate = asyncio.Semaphore(16)

        async def put(name: str, ids: tuple[str, ...]) -> None:
            async with gate, session.put(f"{urls[0]}/collections/{name}", json={"videos": ids}) as r:
                if r.status not in (200, 201):
                    raise LabError(f"seeding {name}: {r.status} {await r.text()}")

        await asyncio.gather(*(put(n, ids) for n, ids in collections.items()))


async def ask(
    urls: Sequence[str],
    requests: Sequence[str],
    rate: float,
    counter_url: str = "",
    slice_s: float = 0.0,
    clients: int = 0,
) -> tuple[Tally, float]:
    """Open loop: request i leaves at i/rate seconds (round-robin over the replicas); with
    ``clients``, a closed loop instead: that many clients, each sending the next request once
    its last is answered. With ``slice_s``, the double's counter (``counter_url``) is read every
    ``slice_s`` meanwhile."""
    tally = Tally()
    connector = aiohttp.TCPConnector(limit=256)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=10)) as session:

        async def sample() -> None:
            while True:
                await asyncio.sleep(slice_s)
                async with session.get(counter_url) as r:
                    tally.counts.append(int((await r.json())["calls"]))

        async def one(i: int, name: str) -> None:
            started = time.perf_counter()
            try:
                async with session.get(f"{urls[i % len(urls)]}/collections/{name}/stats") as r:
                    await r.read()
                    tally.statuses[r.status] = tally.statuses.get(r.status, 0) + 1
                    tally.ages.append(int(r.headers.get("age", "0")))
            except (aiohttp.ClientError, TimeoutError):
                tally.errors += 1
                return
            tally.latencies.append(time.perf_counter() - started)

        sampler = asyncio.create_task(sample()) if slice_s else None
        began = time.perf_counter()
        if clients:
            queue = iter(enumerate(requests))

            async def client() -> None:
                for i, name in queue:  # one iterator: each request is taken by one client
                    await one(i, name)

            await asyncio.gather(*(client() for _ in range(clients)))
        else:
            tasks = []
            for i, name in enumerate(requests):
                delay = began + i / rate - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(one(i, name)))
            await asyncio.gather(*tasks)
        if sampler is not None:
            sampler.cancel()
        return tally, time.perf_counter() - began
