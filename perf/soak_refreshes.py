"""The soak's refresh storms: the `distributed` profile on two workers and one Redis, its refresher
reading every collection's playlist again every second, while clients refresh the collections
too, put ids into them and delete them, each client owning its collections (so it knows what it
last had acknowledged for each).

A client's cycle, per collection: import it from the playlist; two refreshes beside a PUT of
new ids; import it again; a refresh beside a DELETE. Once the clients stop (the refresher still
running), and again three intervals later: every collection is what its last acknowledged write
made it (the ids, with no source; deleted; the playlist's videos, with the playlist as source),
and no source key in Redis is without its collection (issue 31: 7 of 1,000 PUTs of ids came back
to the playlist within 4 s; 365 of 800 DELETE races left source keys).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import redis

from influencer_stats.bootstrap.edge import ROUTES
from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from perf.procs import HOST, free_port, running, wait_until_ok
from perf.redis_server import redis_process
from perf.service import installed_argv, pooled, service_env
from perf.upstream import python_double

PLAYLIST = "PLstorm"
PLAYLIST_VIDEOS = [synthetic_video_id(n) for n in range(3)]
PREFIX = "storm"
INTERVAL_S = 1


@dataclass
class Storm:
    """What the clients had acknowledged, per collection, and how many races each kind ran."""

    last: dict[str, tuple[str, ...] | str] = field(default_factory=dict)  # ids, "playlist" or "deleted"
    counts: Counter[str] = field(default_factory=Counter)


async def _client(http: httpx.AsyncClient, name: str, number: int, stop_at: float, storm: Storm) -> None:
    """One collection's cycle, again and again until ``stop_at``."""
    path = f"/collections/{name}"
    for turn in range(1_000_000):  # bounded; stop_at ends it long before
        if time.monotonic() >= stop_at:
            return
        if (await http.put(path, json={"playlist": PLAYLIST})).status_code in (200, 201):
            storm.last[name] = "playlist"
        if turn % 2 == 0:
            ids = (synthetic_video_id(10_000_000 + 1_000 * number + turn % 1_000),)
            *refreshes, put = await asyncio.gather(
                http.post(f"{path}/refresh", json={}),
                http.post(f"{path}/refresh", json={}),
                http.put(path, json={"videos": ids}),
            )
            storm.counts[f"ids {put.status_code}"] += 1
            if put.status_code in (200, 201):
                storm.last[name] = ids
        else:
            *refreshes, deleted = await asyncio.gather(
                http.post(f"{path}/refresh", json={}), http.delete(path)
            )
            storm.counts[f"delete {deleted.status_code}"] += 1
            if deleted.status_code == 204:
                storm.last[name] = "deleted"
        storm.counts.update(f"refresh {r.status_code}" for r in refreshes)


async def _storm(url: str, collections: int, seconds: float) -> Storm:
    storm = Storm()
    stop_at = time.monotonic() + seconds
    limits = pooled(3 * collections)
    async with httpx.AsyncClient(base_url=url, timeout=30, limits=limits) as http:
        await asyncio.gather(*(_client(http, f"storm-{n}", n, stop_at, storm) for n in range(collections)))
    return storm


def _lost(url: str, storm: Storm) -> list[str]:
    """The collections that are not what their last acknowledged write made them."""
    lost = []
    with httpx.Client(base_url=url, timeout=30) as http:
        for name, last in sorted(storm.last.items()):
            shown = http.get(f"/collections/{name}")
            if last == "deleted":
                expected: tuple[int, object] = (404, None)
            elif last == "playlist":
                expected = (200, {"videos": PLAYLIST_VIDEOS, "source": {"playlist": PLAYLIST}})
            else:
                expected = (200, {"videos": list(last)})
            if (shown.status_code, shown.json() if shown.status_code == 200 else None) != expected:
                lost.append(name)
    return lost


def _orphans(redis_port: int) -> set[str]:
    """The collections with a source key (or its revision or claim) but no collection key."""
    client = redis.Redis(host=HOST, port=redis_port)
    try:
        found = set()
        for key in client.scan_iter(match=f"{PREFIX}:source*", count=1_000):
            collection = key.decode().partition("{")[2].rstrip("}")
            if not client.exists(f"{PREFIX}:col:{{{collection}}}"):  # the Redis store's key of it
                found.add(collection)
        return found
    finally:
        client.close()


def refreshes_installed() -> bool:
    """Whether the service has the refresh route (the ``sources`` slice) and a Redis store (the
    ``redis`` slice): the phase follows what is installed, by the route table and the store's
    registry, never by a module of either slice."""
    return "/collections/{id}/refresh" in ROUTES and "redis" in SLOTS["store"].registry


def refresh_storm_phase(
    work: Path, seconds: float, collections: int
) -> tuple[list[tuple[str, str]], list[str]]:
    """The phase's rows of the soak's table, and the invariants it broke."""
    with (
        python_double(work, latency_ms=2) as double,
        redis_process(work / "redis-refresh-storms.log") as redis_port,
    ):
        playlist = {"id": PLAYLIST, "videos": PLAYLIST_VIDEOS}
        httpx.post(double.base_url + "/_control/playlists", json=playlist, timeout=10).raise_for_status()
        port, log = free_port(), work / "service-refresh-storms.log"
        settings = {
            "INFLUENCER_STATS_SOURCE_REFRESH_INTERVAL": str(INTERVAL_S),
            "INFLUENCER_STATS_REFRESH_MIN_INTERVAL": "0",  # every refresh reads: the races are the point
            "REDIS_URL": f"redis://{HOST}:{redis_port}/0",
            "INFLUENCER_STATS_REDIS_PREFIX": PREFIX,
        }
        env = service_env(double.url, "soak-key", settings)
        with running([*installed_argv("distributed", port), "--workers", "2"], log, env=env) as service:
            wait_until_ok(port, "/healthz", service, log)
            url = f"http://{HOST}:{port}"
            storm = asyncio.run(_storm(url, collections, seconds))
            lost_at_once, orphans_at_once = _lost(url, storm), _orphans(redis_port)
            time.sleep(3 * INTERVAL_S)  # three of the refresher's passes: none may undo a write
            lost_later, orphans_later = _lost(url, storm), _orphans(redis_port)
    # A refresh between keeping its source and looking at the collection again may show one
    # for a moment: an orphan is one still there three intervals later.
    orphans = orphans_at_once & orphans_later
    counts = storm.counts
    violations = []
    if lost_at_once or lost_later:
        violations.append(
            f"refresh storms: {len(set(lost_at_once) | set(lost_later))} collections not what their last "
            f"acknowledged write made them ({sorted(set(lost_at_once) | set(lost_later))[:5]})"
        )
    if orphans:
        violations.append(f"refresh storms: {len(orphans)} source keys without a collection")
    unexpected = {k: n for k, n in counts.items() if k.split()[1] not in ("200", "201", "204", "404", "409")}
    if unexpected:
        violations.append(f"refresh storms: unexpected answers {unexpected}")
    races = counts["ids 200"] + counts["ids 201"] + counts["delete 204"]
    refreshes = sum(n for k, n in counts.items() if k.startswith("refresh"))
    rows = [
        (
            "refresh storms: races, the refresher every 1 s on 2 workers and one Redis",
            f"{races:,} by {collections} clients in {seconds:g} s: {counts['ids 200']:,} PUTs of ids, "
            f"{counts['delete 204']:,} DELETEs, beside {refreshes:,} refreshes "
            f"({', '.join(f'{s}: {n:,}' for s, n in sorted(counts.items()) if s.startswith('refresh'))})",
        ),
        (
            "refresh storms: writes lost at once / 3 s later, source keys without a collection",
            f"{len(lost_at_once)} / {len(lost_later)}, {len(orphans)}",
        ),
    ]
    return rows, violations
