"""Clients writing and reading through a service while a part of it fails: what they saw.

Each client PUTs a new collection, then reads its stats, until ``until.at``; every status
(or exception name) is counted, every acknowledged write kept with its videos, every answer
that is not the written collection's stats noted, and the answers after ``after`` is set
counted. Used by the tests that take a replica away under load (compose, the image).
"""

from __future__ import annotations

import asyncio
import collections
import json
from dataclasses import dataclass, field

import aiohttp

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from tests.support import expected_stats


def videos_of(seed: int, n: int) -> list[str]:
    return [synthetic_video_id(seed * 10 + k) for k in range(n)]


@dataclass
class Load:
    """What the clients saw: statuses (or exception names) counted, writes acknowledged."""

    statuses: collections.Counter[str] = field(default_factory=collections.Counter)
    wrong_stats: list[str] = field(default_factory=list)
    acknowledged: dict[str, list[str]] = field(default_factory=dict)
    answered_after: int = 0


@dataclass
class Until:
    """When the clients stop sending (moved up once the failure is in)."""

    at: float


async def write_and_read(
    http: aiohttp.ClientSession, name: str, worker: int, load: Load, after: asyncio.Event, until: Until
) -> None:
    """Client ``worker`` (its collections are ``<name>-<worker>-<n>``), until ``until.at``."""
    loop = asyncio.get_running_loop()
    n = 0
    while loop.time() < until.at:
        n += 1
        collection_id, videos = f"{name}-{worker}-{n}", videos_of(worker * 100_000 + n, 1 + n % 5)
        try:
            async with http.put(f"/collections/{collection_id}", json={"videos": videos}) as put:
                await put.read()
                load.statuses[f"PUT {put.status}"] += 1
            if put.status in (200, 201):
                load.acknowledged[collection_id] = videos
            async with http.get(f"/collections/{collection_id}/stats") as get:
                body = await get.read()
                load.statuses[f"GET {get.status}"] += 1
            if get.status == 200 and json.loads(body) != expected_stats(videos):
                load.wrong_stats.append(collection_id)
        except (aiohttp.ClientError, TimeoutError) as error:
            load.statuses[type(error).__name__] += 1
        if after.is_set():
            load.answered_after += 1
