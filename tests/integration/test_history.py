"""A collection's history end to end: real services taking snapshots every second.

- Every server answers /history and /growth from the snapshots the service took, and a
  DELETE takes the history with the collection.
- Two processes on one Redis take one snapshot per collection per interval between them
  (their ``history.snapshots`` lines: for every interval both passed, one recorded it).
"""

from __future__ import annotations

import json
import math
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from tests.containers import redis_server
from tests.support import SERVERS, expected_stats, profile_args, running_service, wait_for

EVERY_SECOND = {"INFLUENCER_STATS_SNAPSHOT_INTERVAL": "1"}
VIDEOS = [synthetic_video_id(n) for n in range(3)]


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as redis:
        yield redis.url


def points(http: httpx.Client, url: str, collection: str) -> list[dict[str, object]]:
    reply = http.get(f"{url}/collections/{collection}/history")
    assert reply.status_code == 200, reply.text
    found: list[dict[str, object]] = reply.json()["points"]
    return found


@pytest.mark.parametrize("server", SERVERS)
def test_every_server_answers_the_history_it_recorded_and_forgets_it_with_the_collection(
    server: str, tmp_path: Path
) -> None:
    with (
        running_service(["--server", server], tmp_path / "service.log", env=EVERY_SECOND) as service,
        httpx.Client(timeout=10) as http,
    ):
        assert http.put(f"{service.url}/collections/campaign", json={"videos": VIDEOS}).status_code == 201
        assert wait_for(lambda: len(points(http, service.url, "campaign")) >= 2, timeout=15)

        first, *_, last = points(http, service.url, "campaign")
        figures = {k: v for k, v in last.items() if k in ("impressions", "engagements", "score", "videos")}
        growth = http.get(f"{service.url}/collections/campaign/growth", params={"since": str(first["at"])})
        daily = http.get(f"{service.url}/collections/campaign/history", params={"step": "1d"}).json()
        assert http.delete(f"{service.url}/collections/campaign").status_code == 204
        gone = http.get(f"{service.url}/collections/campaign/history")

    stats = expected_stats(VIDEOS)
    assert figures == {k: stats[k] for k in figures} and last["gap"] is False
    assert growth.status_code == 200
    assert growth.json()["change"]["impressions"] == {"absolute": 0, "relative": 0.0}
    assert len(daily["points"]) == 1 and daily["points"][0]["at"] >= last["at"]
    assert gone.status_code == 404


def test_two_processes_on_one_redis_take_one_snapshot_per_interval(redis_url: str, tmp_path: Path) -> None:
    env = {**EVERY_SECOND, "INFLUENCER_STATS_VIDEO_CLIENT": "fake", "REDIS_URL": f"{redis_url}/5"}
    distributed = profile_args("distributed")
    with (
        running_service(distributed, tmp_path / "a.log", env=env) as a,
        running_service(distributed, tmp_path / "b.log", env=env) as b,
        httpx.Client(timeout=10) as http,
    ):
        http.put(f"{a.url}/collections/shared", json={"videos": VIDEOS})
        written = math.floor(time.time())  # every interval after this one's start sees the collection
        assert wait_for(lambda: len(points(http, b.url, "shared")) >= 5, timeout=20)

    passes: dict[int, list[dict[str, int]]] = defaultdict(list)
    for log in (tmp_path / "a.log", tmp_path / "b.log"):
        for line in log.read_text().splitlines():
            event = json.loads(line) if line.startswith("{") else {}
            if event.get("event") == "history.snapshots" and event["slot"] > written:
                passes[event["slot"]].append(event)
    both = {slot: seen for slot, seen in passes.items() if len(seen) == 2}
    assert len(both) >= 2, passes  # both processes passed in these intervals
    assert all(len(seen) <= 2 for seen in passes.values()), passes  # each process once per interval
    for seen in both.values():  # each saw the one collection, and between them they recorded it once
        assert sorted(e["recorded"] + e["taken_elsewhere"] for e in seen) == [1, 1]
        assert sum(e["recorded"] for e in seen) == 1
