"""The per-video cache in Redis while Redis freezes (the joint ``redis__video_cache``), on every
server: real service processes, real sockets, the YouTube double as its own process, a real Redis.

- A worker waiting for another's call while Redis is frozen answers by its deadline (it waited
  out the whole freeze before).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.containers import redis_server
from tests.integration.test_hardening_upstream import new_videos, youtube_env
from tests.support import (
    SERVERS,
    RunningService,
    expected_stats,
    profile_args,
    running_double_process,
    running_service,
    wait_for,
)


@pytest.mark.parametrize("server", SERVERS)
def test_a_worker_waiting_for_anothers_call_answers_by_its_deadline_while_redis_is_frozen(
    server: str, tmp_path: Path
) -> None:
    videos = new_videos(0, 40)
    timeouts = {"INFLUENCER_STATS_UPSTREAM_TIMEOUT": "5"}  # the double takes 1 s a call
    with (
        redis_server() as redis,
        running_double_process(tmp_path / "double.log", latency_ms=1_000) as double,
    ):
        env = youtube_env(double, REDIS_URL=redis.url, **timeouts)
        argv = [*profile_args("distributed"), "--server", server]
        with (
            running_service(argv, tmp_path / "a.log", env=env) as a,
            running_service(argv, tmp_path / "b.log", env=env) as b,
            httpx.Client(timeout=30) as client,
        ):
            assert client.put(f"{a.url}/collections/c", json={"videos": videos}).status_code == 201
            waited = asyncio.run(_wait_while_frozen(a, b, redis.container.get_wrapped_container()))
            assert wait_for(lambda: client.get(f"{b.url}/readyz").status_code == 200, 20)
            after = client.get(f"{b.url}/collections/c/stats")

    status, seconds = waited
    assert status in (200, 504)  # its entries, or the deadline: never the whole freeze
    assert seconds < 5.0, f"the waiter answered after {seconds:.1f} s of an 8 s freeze"
    assert after.status_code == 200 and after.json() == expected_stats(videos)


async def _wait_while_frozen(a: RunningService, b: RunningService, docker: Any) -> tuple[int, float]:
    """A calls for the videos (1 s), B misses them a moment later and waits for A's call; then
    Redis freezes for 8 s. How B answered, and after how long."""
    async with httpx.AsyncClient(timeout=30) as client:
        first = asyncio.create_task(client.get(f"{a.url}/collections/c/stats"))
        await asyncio.sleep(0.3)  # A has claimed them and its call is out (pacing)
        started = time.monotonic()
        second = asyncio.create_task(client.get(f"{b.url}/collections/c/stats"))
        await asyncio.sleep(0.3)  # B waits for A's entries now
        await asyncio.to_thread(docker.pause)
        try:
            done, _ = await asyncio.wait({second}, timeout=8)
            answered = second.result() if done else None
            seconds = time.monotonic() - started
        finally:
            await asyncio.to_thread(docker.unpause)
        reply = answered or await second
        await first
        return reply.status_code, seconds
