"""compose.yaml brought up by a real compose implementation, a replica killed under load.

tests/integration/test_deployment.py runs compose.yaml's services one by one; this test hands
the files themselves to compose, as a user does:

- With local images (``IT_LOCAL_IMAGES=1``, this kind of machine): Debian's ``docker-compose``
  (1.29, installed by scripts/docker-up.sh) with ``-f compose.yaml -f compose.host.yaml``,
  the images built by scripts/docker-up.sh given through BASE, REDIS_IMAGE and NGINX_IMAGE,
  every service on host networking on free loopback ports.
- Otherwise (a developer's engine with Docker Hub): compose.yaml alone, its defaults, nginx
  published on a free port; ``docker-compose`` or else ``docker compose`` (v2).

Each run is a project of its own name (never another run's containers), torn down with
``down -v`` whatever happens. Under load through the balancer, one replica is killed
(SIGKILL, ``compose kill api-1``): nginx retries what it dropped on the other one, no client
sees anything but 2xx, every acknowledged write is read back afterwards and its stats answer.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import pytest

from tests.containers import LOCAL_IMAGES, LOCAL_PYTHON, LOCAL_REDIS, REPO_ROOT, require_docker
from tests.support import expected_stats, installed_env
from tests.write_load import Load, Until, write_and_read

LOCAL_NGINX = "local/nginx:1.27"
# Not the default influencer-stats:latest: a developer's own build of it is left alone.
SERVICE_IMAGE = "influencer-stats:compose-test"
REPLICAS = ("api-1", "api-2")
#: The replicas' environment in compose.yaml (one anchor for both).
COMPOSE_API_ENV: dict[str, str] = importlib.import_module("yaml").safe_load(
    (REPO_ROOT / "compose.yaml").read_text()
)["services"]["api-1"]["environment"]
KILLED = "api-1"
# compose.host.yaml replaces compose.yaml's nginx (which publishes a port) by this twin.
BALANCER = "balancer" if LOCAL_IMAGES else "nginx"
UP_TIMEOUT_S = 480  # a build from scratch installs the runtime dependencies from PyPI
HEALTHY_TIMEOUT_S = 90
COMMAND_TIMEOUT_S = 120
PORT_VARIABLES = ("NGINX_PORT", "API_1_PORT", "API_2_PORT", "YOUTUBE_DOUBLE_PORT", "REDIS_PORT")
# The fixture's build and bring-up count towards the first test's time (pyproject's 300 s).
pytestmark = pytest.mark.timeout(UP_TIMEOUT_S + HEALTHY_TIMEOUT_S + 2 * COMMAND_TIMEOUT_S)


def compose_command() -> list[str]:
    """Debian's docker-compose if installed, else compose v2 as a docker plugin."""
    require_docker()
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    probe = subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30, check=False)
    if probe.returncode == 0:
        return ["docker", "compose"]
    message = "neither docker-compose nor `docker compose` is installed: run scripts/docker-up.sh as root"
    if os.environ.get("CI", "").lower() == "true":
        raise RuntimeError(message)
    pytest.skip(message)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Compose:
    """One compose project: its command line (files and name) and its variables."""

    command: tuple[str, ...]
    env: Mapping[str, str]
    project: str

    def run(self, *args: str, timeout: float = COMMAND_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.command, *args],
            cwd=REPO_ROOT,
            env=dict(self.env),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def container_id(self, service: str) -> str:
        result = self.run("ps", "-q", service)
        (container_id,) = result.stdout.split()
        return container_id

    def logs(self, *services: str, tail: int = 40) -> str:
        return self.run("logs", "--no-color", f"--tail={tail}", *services).stdout


def _stand_ins() -> Path | None:
    """A compose file of its own (JSON, which is YAML) setting, in each replica, the slot variables
    that run compose's choices not installed (a slice removed) on what is installed
    (``tests.support.installed_env``); None with every slice installed."""
    variables = installed_env(COMPOSE_API_ENV)
    if not variables:
        return None
    path = Path(tempfile.mkdtemp(prefix="compose-installed-")) / "installed.yaml"
    path.write_text(json.dumps({"services": {name: {"environment": variables} for name in REPLICAS}}))
    return path


def project_compose() -> Compose:
    # The ports of compose.host.yaml (NGINX_PORT alone with compose.yaml): free ones, not the defaults.
    variables = {name: str(free_port()) for name in PORT_VARIABLES}
    variables["SERVICE_IMAGE"] = SERVICE_IMAGE
    files = ["-f", "compose.yaml"]
    if LOCAL_IMAGES:
        files += ["-f", "compose.host.yaml"]
        variables |= {"BASE": LOCAL_PYTHON, "REDIS_IMAGE": LOCAL_REDIS, "NGINX_IMAGE": LOCAL_NGINX}
        # The legacy builder: it honours compose.host.yaml's `build: network: host`.
        variables["DOCKER_BUILDKIT"] = "0"
    if (stand_ins := _stand_ins()) is not None:
        files += ["-f", str(stand_ins)]
    # With this process's id: scripts/docker-up.sh removes the project if the process is gone.
    project = f"istats-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    return Compose((*compose_command(), "-p", project, *files), {**os.environ, **variables}, project)


def docker_client() -> Any:
    # docker-py ships no type hints; importlib keeps mypy --strict quiet.
    return importlib.import_module("docker").from_env(timeout=30)


def image_id(client: Any, tag: str) -> str | None:
    docker = importlib.import_module("docker")
    try:
        return str(client.images.get(tag).id)
    except docker.errors.ImageNotFound:
        return None


@dataclass(frozen=True)
class Stack:
    compose: Compose
    url: str  # the balancer
    containers: Mapping[str, Any]  # service name -> docker-py container


def wait_until_healthy(containers: Mapping[str, Any], seconds: float) -> dict[str, str]:
    """Each container's health status, once all are healthy or after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        for container in containers.values():
            container.reload()
        health = {
            name: str(c.attrs["State"].get("Health", {}).get("Status")) for name, c in containers.items()
        }
        if set(health.values()) == {"healthy"} or time.monotonic() > deadline:
            return health
        time.sleep(0.5)


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    """The project up and healthy; `down -v` (containers, volume) whatever happens."""
    compose = project_compose()
    client = docker_client()
    previous_image = image_id(client, SERVICE_IMAGE)
    try:
        up = compose.run("up", "-d", "--build", timeout=UP_TIMEOUT_S)
        assert up.returncode == 0, (
            f"compose up failed:\n{up.stdout[-3000:]}\n{up.stderr[-3000:]}\n{compose.logs()}"
        )
        # A rebuild leaves the former image untagged: remove it rather than let every run add one
        # (kept while a container, e.g. another run's, still uses it).
        if previous_image not in (None, image_id(client, SERVICE_IMAGE)):
            with suppress(importlib.import_module("docker").errors.APIError):
                client.images.remove(previous_image)
        services = (*REPLICAS, "redis", "youtube-double", BALANCER)
        running = {name: client.containers.get(compose.container_id(name)) for name in services}
        health = wait_until_healthy(running, HEALTHY_TIMEOUT_S)
        assert set(health.values()) == {"healthy"}, (
            f"not healthy in {HEALTHY_TIMEOUT_S} s: {health}\n{compose.logs()}"
        )
        yield Stack(compose, f"http://127.0.0.1:{compose.env['NGINX_PORT']}", running)
    finally:
        down = compose.run("down", "-v", "--remove-orphans", "--timeout", "5")
        client.close()
        assert down.returncode == 0, f"compose down failed:\n{down.stderr[-3000:]}"


@pytest.mark.parametrize(
    "files", [["compose.yaml"], ["compose.yaml", "compose.host.yaml"]], ids=["compose.yaml", "with-host"]
)
def test_the_files_are_valid_for_the_installed_compose(files: list[str]) -> None:
    # Both ways of bringing it up, whichever this machine can run: e.g. a top-level `name:`
    # (compose v2's) is refused by docker-compose 1.29.
    command = [*compose_command(), *(arg for name in files for arg in ("-f", name)), "config", "--quiet"]
    result = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, check=False)

    assert result.returncode == 0, result.stderr


def test_the_stack_comes_up_from_the_files_with_the_images_the_variables_name(stack: Stack) -> None:
    images = {name: container.attrs["Config"]["Image"] for name, container in stack.containers.items()}
    expected_redis, expected_nginx = (
        (LOCAL_REDIS, LOCAL_NGINX) if LOCAL_IMAGES else ("redis:7-alpine", "nginx:1.27-alpine")
    )
    assert images == {
        **dict.fromkeys([*REPLICAS, "youtube-double"], SERVICE_IMAGE),
        "redis": expected_redis,
        BALANCER: expected_nginx,
    }
    if LOCAL_IMAGES:
        # Host networking only: every container in the host's namespace, no network created.
        modes = {name: c.attrs["HostConfig"]["NetworkMode"] for name, c in stack.containers.items()}
        assert set(modes.values()) == {"host"}, modes
        client = docker_client()
        try:
            networks = client.networks.list(
                filters={"label": f"com.docker.compose.project={stack.compose.project}"}
            )
        finally:
            client.close()
        assert networks == []
    with httpx.Client(base_url=stack.url, timeout=10) as http:
        assert http.get("/lb-healthz").status_code == 200
        ready = http.get("/readyz")  # a replica's readiness, Redis included
        assert ready.status_code == 200, ready.text


# Kills a replica of the module's stack for good: keep it the module's last test.
async def test_a_replica_killed_under_load_loses_no_acknowledged_write(stack: Stack) -> None:
    loop = asyncio.get_running_loop()
    load, killed = Load(), asyncio.Event()
    async with aiohttp.ClientSession(stack.url, timeout=aiohttp.ClientTimeout(total=10)) as http:
        until = Until(loop.time() + COMMAND_TIMEOUT_S)  # bounded even if the kill hangs
        clients = [
            asyncio.create_task(write_and_read(http, "compose", w, load, killed, until)) for w in range(8)
        ]
        await asyncio.sleep(1.5)
        kill = await asyncio.to_thread(stack.compose.run, "kill", KILLED)  # SIGKILL: no draining
        killed.set()
        until.at = min(until.at, loop.time() + 4.0)
        await asyncio.gather(*clients)

        # Every acknowledged write, read back through the balancer (now one replica), stats too.
        missing, stats_wrong = [], []
        for collection_id, videos in load.acknowledged.items():
            async with http.get(f"/collections/{collection_id}") as got:
                if got.status != 200 or await got.json() != {"videos": videos}:
                    missing.append(collection_id)
            async with http.get(f"/collections/{collection_id}/stats") as stats:
                if stats.status != 200 or await stats.json() != expected_stats(videos):
                    stats_wrong.append(collection_id)

    container = stack.containers[KILLED]
    container.reload()
    state = container.attrs["State"]
    # nginx's log (deploy/nginx's `balancer` format) names the replica(s) each request went to.
    balancer_log = bytes(stack.containers[BALANCER].logs(stdout=True, stderr=False)).decode()
    tried = [
        match.group(1).split(", ")
        for match in re.finditer(
            r'"\w+ /collections/compose-\S* HTTP/1.1" .* upstream="([^"]*)"', balancer_log
        )
    ]
    summary = (
        f"{dict(load.statuses)}, {len(load.acknowledged)} writes acknowledged, {load.answered_after} "
        f"answered after the kill, {len(tried)} requests logged, {sum(len(t) > 1 for t in tried)} retried"
    )
    print(summary)  # the run's figures (pytest -s, or -rP)
    assert kill.returncode == 0, kill.stderr
    assert not state["Running"] and state["ExitCode"] == 137, state  # killed, not restarted
    # nginx retried whatever the killed replica dropped or refused on the other one.
    assert set(load.statuses) <= {"PUT 200", "PUT 201", "GET 200"}, summary
    assert len(load.acknowledged) >= 200, summary
    assert load.answered_after >= 200, summary
    if LOCAL_IMAGES:  # host networking: the log names the replicas by their loopback ports
        address = f"127.0.0.1:{stack.compose.env['API_1_PORT']}"
        assert sum(t == [address] for t in tried) >= 20, summary  # the killed replica took load before
        assert any(len(t) > 1 and t[0] == address for t in tried), summary  # then nginx failed over
    assert load.wrong_stats == [], summary
    assert missing == [], f"{len(missing)} of {len(load.acknowledged)} acknowledged writes lost; {summary}"
    assert stats_wrong == [], f"{len(stats_wrong)} collections' stats wrong after the kill; {summary}"
