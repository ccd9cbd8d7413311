"""The stats history on Redis end to end (the joint ``history__redis``): real services taking
snapshots every second.

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

from tests.containers import redis_server
from tests.integration.test_history import EVERY_SECOND, VIDEOS, points
from tests.support import profile_args, running_service, wait_for


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as redis:
        yield redis.url


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
