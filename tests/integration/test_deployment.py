"""The multi-host setup of compose.yaml, run for real, container by container (the redis slice's).

The service image is built from the repository's Dockerfile (on local/python:3.11 with local
images, else on its default base; the image alone: tests/integration/test_image.py), then the
stack of compose.yaml is started from it:
Redis with compose's command line, the YouTube double, two replicas with compose's
environment, and nginx rendering deploy/nginx/default.conf.template with compose's
variables. Only the addresses differ: with host networking every process listens on its own
127.0.0.1 port, so each compose address (``redis:6379``, ``api-1:8080``, ...) is replaced by
the port the test picked.

- Redis keeps its append-only file (compose's command line).
- Writes through the balancer are read back by each replica directly.
- A replica stopped (SIGTERM) under load through the balancer: it drains and exits 0,
  nginx retries on the other replica, no client sees anything but 2xx and every
  acknowledged write is readable afterwards.
"""

from __future__ import annotations

import asyncio
import importlib
import pathlib
import re
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import aiohttp
import httpx
import pytest

from tests.containers import (
    REPO_ROOT,
    Endpoint,
    nginx_server,
    peer_address,
    redis_command,
    redis_server,
    service_container,
)
from tests.support import expected_stats, installed_env
from tests.write_load import Load, Until, videos_of, write_and_read

COMPOSE: dict[str, Any] = importlib.import_module("yaml").safe_load((REPO_ROOT / "compose.yaml").read_text())
NGINX_TEMPLATE = REPO_ROOT / "deploy" / "nginx" / "default.conf.template"
REPLICAS = ("api-1", "api-2")
ONE_SECOND_NS = 1_000_000_000


def service(name: str) -> dict[str, Any]:
    return dict(COMPOSE["services"][name])


def addressed(env: Mapping[str, object], addresses: Mapping[str, str], used: set[str]) -> dict[str, str]:
    """`env` (compose's) with every compose address replaced by where the test runs that service."""
    out = {}
    for name, value in env.items():
        text = str(value)
        for compose_address, address in addresses.items():
            if compose_address in text:
                used.add(compose_address)
                text = text.replace(compose_address, address)
        out[name] = text
    return out


@dataclass(frozen=True)
class Stack:
    balancer: Endpoint
    replicas: tuple[Endpoint, ...]
    redis: Endpoint


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    """compose.yaml's services from the freshly built image, on loopback ports; all removed after."""
    used: set[str] = set()
    with ExitStack() as running:
        redis_command_line = service("redis")["command"]
        assert redis_command_line[0] == "redis-server"
        redis = running.enter_context(redis_server(redis_command_line[1:]))

        double_command = service("youtube-double")["command"]
        assert double_command[-4:] == ["--host", "0.0.0.0", "--port", "8081"]
        # The image's HEALTHCHECK probes the service's port, not the double's: off.
        double = running.enter_context(
            service_container({}, double_command[:-4], healthcheck={"test": ["NONE"]})
        )

        addresses = {"redis:6379": peer_address(redis), "youtube-double:8081": peer_address(double)}
        replicas = tuple(
            running.enter_context(
                service_container(
                    {
                        **addressed(service(name)["environment"], addresses, used),
                        **installed_env(service(name)["environment"]),  # on what is installed
                    },
                    health_path="/readyz",
                    # The image's HEALTHCHECK, probed every second instead of every 10 s.
                    healthcheck={"interval": ONE_SECOND_NS},
                )
            )
            for name in REPLICAS
        )

        nginx = service("nginx")
        upstreams = {
            f"{name}:8080": peer_address(replica) for name, replica in zip(REPLICAS, replicas, strict=True)
        }
        env = addressed(
            {k: v for k, v in nginx["environment"].items() if k != "NGINX_LISTEN"}, upstreams, used
        )
        site = pathlib.Path(running.enter_context(tempfile.TemporaryDirectory(prefix="nginx-site-")))
        balancer = running.enter_context(
            nginx_server(site, NGINX_TEMPLATE.read_text(), health_path="/lb-healthz", env=env)
        )
        # Every compose address was found (and replaced): the test runs what compose.yaml says.
        assert used == {*addresses, *upstreams}
        yield Stack(balancer, replicas, redis)


def balancer_log(stack: Stack) -> str:
    stdout, _ = stack.balancer.container.get_logs()
    return bytes(stdout).decode()


def test_redis_runs_with_the_append_only_file(stack: Stack) -> None:
    info = redis_command(stack.redis.host, stack.redis.port, "INFO", "persistence")
    assert info is not None and b"aof_enabled:1" in info


def test_writes_through_the_balancer_are_read_by_each_replica(stack: Stack) -> None:
    with httpx.Client(timeout=10) as http:
        for n in range(1, 11):
            videos = videos_of(1000 + n, n)
            put = http.put(f"{stack.balancer.url}/collections/rw-{n}", json={"videos": videos})
            assert put.status_code in (200, 201), put.text
            for replica in stack.replicas:
                collection = http.get(f"{replica.url}/collections/rw-{n}")
                stats = http.get(f"{replica.url}/collections/rw-{n}/stats")
                assert collection.json() == {"videos": videos}
                assert stats.status_code == 200 and stats.json() == expected_stats(videos)


# Stops a replica of the module's stack for good: keep it the module's last test.
async def test_a_replica_stopped_under_load_loses_no_acknowledged_write(stack: Stack) -> None:
    stopped = stack.replicas[1].container.get_wrapped_container()
    loop = asyncio.get_running_loop()
    load, stop = Load(), asyncio.Event()
    until = Until(loop.time() + 20)  # bounded even if the stop hangs

    async with aiohttp.ClientSession(stack.balancer.url, timeout=aiohttp.ClientTimeout(total=10)) as http:
        clients = [asyncio.create_task(write_and_read(http, "load", w, load, stop, until)) for w in range(8)]
        await asyncio.sleep(1.0)
        began = time.monotonic()
        # docker stop: SIGTERM (the image's STOPSIGNAL), SIGKILL only after 15 s.
        await asyncio.to_thread(stopped.stop, timeout=15)
        stop_took = time.monotonic() - began
        stop.set()
        until.at = min(until.at, loop.time() + 1.5)
        await asyncio.gather(*clients)

        exit_code = (await asyncio.to_thread(stopped.wait, timeout=5))["StatusCode"]
        # Every acknowledged write, read back through the balancer (now one replica).
        missing = []
        for collection_id, videos in load.acknowledged.items():
            async with http.get(f"/collections/{collection_id}") as got:
                if got.status != 200 or await got.json() != {"videos": videos}:
                    missing.append(collection_id)

    # nginx's log (deploy/nginx's `balancer` format) names the replica(s) each request went to.
    tried = [
        match.group(1).split(", ")
        for match in re.finditer(
            r'"\w+ /collections/load-\S* HTTP/1.1" .* upstream="([^"]*)"', balancer_log(stack)
        )
    ]
    # nginx logs the address it resolved (an IP, with port mapping not 127.0.0.1): match the port.
    stopped_port = f":{stack.replicas[1].port}"
    summary = (
        f"{dict(load.statuses)}, stop took {stop_took:.1f} s, {len(tried)} requests logged, "
        f"{sum(len(t) > 1 for t in tried)} retried"
    )
    assert exit_code == 0, f"the replica did not exit cleanly on SIGTERM ({exit_code}); {summary}"
    assert stop_took < 10, summary  # drained, not killed after the timeout
    # nginx retried whatever the stopping replica refused or dropped on the other one.
    assert set(load.statuses) <= {"PUT 200", "PUT 201", "GET 200"}, summary
    assert sum(load.statuses.values()) >= 200, summary
    assert load.answered_after >= 20, summary
    # Both replicas took load, and requests the stopping one failed were retried on the other.
    assert sum(len(t) == 1 and t[0].endswith(stopped_port) for t in tried) >= 20, summary
    assert any(len(t) > 1 and t[0].endswith(stopped_port) for t in tried), summary
    assert load.wrong_stats == []
    assert missing == [], f"{len(missing)} of {len(load.acknowledged)} acknowledged writes lost"
