"""Refreshes racing PUTs of ids and DELETEs against a real service, counted: the harness each
shared sources' suite runs (on SQLite: ``test_sources_sqlite.py``; on Redis: ``test_sources_redis.py``).

Each round imports every collection from one playlist of the YouTube double (each read delayed,
so a refresh is still reading when the other request lands), then sends every collection two
refreshes and, at once, a PUT of its own ids or a DELETE. Afterwards every PUT of ids answered
200 is what GET shows, with no source; every DELETE answered 204 stays deleted; and no source is
kept (a row, a key) for a collection that does not exist.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from perf.service import pooled
from tests.integration.youtube_clients_support import YouTubeDouble
from tests.support import running_double_process
from youtube_double import VIDEOS_PATH

COLLECTIONS, ROUNDS = 50, 6  # 300 races, half of them PUTs of ids and half DELETEs
PLAYLIST = "PLraces"
VIDEOS = [str(synthetic_video_id(n)) for n in range(3)]
PREFIX = "races"


@pytest.fixture
def youtube(tmp_path: Path) -> Iterator[str]:
    with running_double_process(tmp_path / "double.log", latency_ms=5) as url:
        YouTubeDouble(url.removesuffix(VIDEOS_PATH)).playlist(PLAYLIST, VIDEOS)
        yield url


#: Every refresh reads YouTube (none refused as too soon after the import): the races are the point.
EVERY_REFRESH_READS = {"INFLUENCER_STATS_REFRESH_MIN_INTERVAL": "0"}


def ids_of(collection: int, round_: int) -> list[str]:
    return [str(synthetic_video_id(1_000 + 100 * round_ + collection))]


async def one_round(http: httpx.AsyncClient, round_: int, counts: Counter[str]) -> None:
    names = [f"c{n}" for n in range(COLLECTIONS)]
    imported = await asyncio.gather(
        *(http.put(f"/collections/{c}", json={"playlist": PLAYLIST}) for c in names)
    )
    refused = [r.text for r in imported if r.status_code not in (200, 201)]
    assert not refused, refused[:3]

    async def race(n: int, c: str) -> tuple[str, int]:
        deleting = (n + round_) % 2 == 1
        other = (
            http.delete(f"/collections/{c}")
            if deleting
            else http.put(f"/collections/{c}", json={"videos": ids_of(n, round_)})
        )
        *refreshes, done = await asyncio.gather(
            http.post(f"/collections/{c}/refresh", json={}),
            http.post(f"/collections/{c}/refresh", json={}),
            other,
        )
        counts.update(f"refresh {r.status_code}" for r in refreshes)
        return ("delete" if deleting else "ids"), done.status_code

    outcomes = await asyncio.gather(*(race(n, c) for n, c in enumerate(names)))
    after = await asyncio.gather(*(http.get(f"/collections/{c}") for c in names))
    for n, (kind, status), shown in zip(range(COLLECTIONS), outcomes, after, strict=True):
        counts[f"{kind} {status}"] += 1
        if kind == "ids" and status == 200:
            lost = shown.status_code != 200 or shown.json() != {"videos": ids_of(n, round_)}
            counts["ids lost"] += lost
        elif kind == "delete" and status == 204:
            counts["deleted came back"] += shown.status_code != 404


def run_races(url: str) -> Counter[str]:
    async def rounds() -> Counter[str]:
        counts: Counter[str] = Counter()
        limits = pooled(4 * COLLECTIONS)
        async with httpx.AsyncClient(base_url=url, timeout=30, limits=limits) as http:
            for round_ in range(ROUNDS):
                await one_round(http, round_, counts)
        return counts

    return asyncio.run(rounds())


def assert_nothing_lost(counts: Counter[str], orphans: Callable[[], int]) -> None:
    races = COLLECTIONS * ROUNDS
    assert counts["ids 200"] + counts["delete 204"] == races, counts  # every write acknowledged
    assert counts["ids lost"] == 0, counts
    assert counts["deleted came back"] == 0, counts
    assert set(counts) <= {"ids 200", "delete 204", "ids lost", "deleted came back"} | {
        f"refresh {s}" for s in (200, 404, 409)
    }, counts
    assert orphans() == 0
