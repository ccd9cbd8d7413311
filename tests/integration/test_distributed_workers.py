"""``distributed --workers 2`` (main.py): read-your-writes of stats across workers (the joint ``redis__workers``).

Two workers under the ``workers`` slice's supervisor share the ``redis`` slice's store (and
whatever else ``distributed`` names that is installed): every read, on either worker, sees the
write before it, stats included, and SIGTERM stops both with exit 0.
"""

from __future__ import annotations

from pathlib import Path

import httpx

from influencer_stats.config.profiles import PROFILES
from tests.integration.test_workers import (
    LISTENING,
    ONE_SHOT,
    QUICK_STOP,
    _stop_and_collect,
    _videos,
    _wait_until_every_worker_listens,
)
from tests.shared_redis import shared_redis_url, unique_prefix
from tests.support import expected_stats, instead_of_slices, profile_args, running_service


def test_distributed_with_two_workers_reads_its_writes_stats_included(tmp_path: Path) -> None:
    env = {
        **QUICK_STOP,
        "TMPDIR": str(tmp_path),
        "REDIS_URL": f"{shared_redis_url()}/0",
        "INFLUENCER_STATS_REDIS_PREFIX": unique_prefix(),
        "INFLUENCER_STATS_VIDEO_CLIENT": "fake",
    }
    argv = [*profile_args("distributed"), "--workers", "2"]
    with (
        running_service(argv, tmp_path / "service.log", env=env) as service,
        httpx.Client(base_url=service.url, timeout=10, limits=ONE_SHOT) as http,
    ):
        _wait_until_every_worker_listens(service)
        for n in range(100):
            videos = _videos(n)
            assert http.put("/collections/multi", json={"videos": videos}).status_code in (200, 201)
            expected = expected_stats(videos)
            assert http.get("/collections/multi/stats").json() == expected, n
            assert http.get("/collections/multi/stats").json() == expected, n  # a cache hit, maybe elsewhere
        code = _stop_and_collect(service)

    assert code == 0
    [said] = [line for line in service.output().splitlines() if line.startswith(LISTENING)]
    server = instead_of_slices("distributed").get("server", PROFILES["distributed"].choices["server"])
    assert said.startswith(
        f"{LISTENING} {service.url} with 2 worker processes (profile distributed: server {server}"
    )
