"""A Redis restarted under a running service (no persistence: it comes back empty).

Every connection the service's pool kept is dead when the first requests after
the restart take them: a command that finds its connection closed before it was
sent is sent again once on a fresh connection, so no request pays for the pool
reconnecting (before: 14 of 100 PUTs right after a restart answered 503).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from tests.containers import (
    LOCAL_IMAGES,
    LOCAL_REDIS,
    HostNetworkMixin,
    RedisPingWaitStrategy,
    redis_command,
    require_docker,
)
from tests.support import free_port, running_service, wait_for

FAKE_VIDEOS = {"INFLUENCER_STATS_VIDEO_CLIENT": "fake"}
#: PUTs under way at once: enough to keep many pooled connections open.
CONCURRENCY = 20


@contextmanager
def restartable_redis() -> Iterator[tuple[HostNetworkMixin, str]]:
    """A Redis without persistence on a fixed port, so a restarted container comes back there."""
    require_docker()
    port = free_port()
    if LOCAL_IMAGES:
        wait = RedisPingWaitStrategy(port).with_startup_timeout(30).with_poll_interval(0.1)
        command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
        container = HostNetworkMixin(LOCAL_REDIS, network_mode="host", _wait_strategy=wait)
    else:
        wait = RedisPingWaitStrategy(6379).with_startup_timeout(30).with_poll_interval(0.1)
        command = ["redis-server", "--save", ""]
        container = HostNetworkMixin("redis:7-alpine", _wait_strategy=wait).with_bind_ports(6379, port)
    with container.with_command(command):
        yield container, f"redis://127.0.0.1:{port}"


async def _puts(url: str, count: int) -> list[int]:
    """``count`` PUTs, ``CONCURRENCY`` at a time: their statuses."""
    limits = httpx.Limits(max_connections=CONCURRENCY)
    async with httpx.AsyncClient(base_url=url, timeout=10, limits=limits) as http:
        turns = asyncio.Semaphore(CONCURRENCY)

        async def put(n: int) -> int:
            async with turns:
                body = {"videos": [synthetic_video_id(n % 7)]}
                return (await http.put(f"/collections/c{n}", json=body)).status_code

        return list(await asyncio.gather(*(put(n) for n in range(count))))


def _answers_ping(host: str, port: int) -> bool:
    try:
        return redis_command(host, port, "PING") == b"PONG"
    except OSError:
        return False


def test_the_puts_right_after_a_redis_restart_all_succeed(tmp_path: Path) -> None:
    with restartable_redis() as (container, url):
        host, port = url.removeprefix("redis://").split(":")
        argv = ["--store", "redis", "--logger", "all", "--metrics", "none"]
        with running_service(argv, tmp_path / "svc.log", env={**FAKE_VIDEOS, "REDIS_URL": url}) as service:
            warm = asyncio.run(_puts(service.url, 100))  # many pooled connections open
            assert set(warm) == {201}

            container.get_wrapped_container().restart(timeout=5)
            assert wait_for(lambda: _answers_ping(host, int(port)), 20)
            statuses = asyncio.run(_puts(service.url, 100))

            assert statuses.count(503) == 0, service.output()[-3000:]
            assert set(statuses) == {201}  # the data went with the restart: each is created again
        assert "Traceback" not in service.output()
