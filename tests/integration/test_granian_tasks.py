"""Granian with either task implementation (``INFLUENCER_STATS_GRANIAN_TASKS``): a test of the
``granian_server`` slice, removed with it. Real processes on loopback, bounded in time."""

from __future__ import annotations

from pathlib import Path

import httpx
import orjson
import pytest

from tests.integration.test_hardening import VIDEOS
from tests.support import running_service


@pytest.mark.parametrize("tasks", ["rust", "asyncio"])
def test_granian_serves_and_binds_request_ids_with_either_task_implementation(
    tasks: str, tmp_path: Path
) -> None:
    env = {"INFLUENCER_STATS_GRANIAN_TASKS": tasks}
    argv = ["--server", "granian", "--logger", "all", "--store", "dict"]
    with running_service(argv, tmp_path / "granian.log", env=env) as service:
        put = httpx.put(f"{service.url}/collections/g", json={"videos": VIDEOS})
        stats = httpx.get(f"{service.url}/collections/g/stats", headers={"x-request-id": "granian-" + tasks})

        assert put.status_code == 201
        assert stats.status_code == 200 and stats.json()["videos"] == 3
        lines = [orjson.loads(line) for line in service.output().splitlines() if line.startswith("{")]
        assert "stats.computed" in [
            line["event"] for line in lines if line.get("request_id") == "granian-" + tasks
        ]
