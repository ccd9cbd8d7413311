"""The container image (Dockerfile), run for real: one container of its default command.

The service image is built from the repository's Dockerfile (on local/python:3.11 with local
images, else on its default base) and run as a user runs it, with no setting:

- non-root, no dev packages, nothing installing packages at run time;
- a HEALTHCHECK that probes /healthz and turns healthy, on any address the service binds;
- the default command serving the demo profile on its own;
- the source revision it was built from, in ``--version`` and its OCI label.

Several replicas of it behind a balancer need a store they share: that deployment
(compose.yaml, tests/integration/test_deployment.py) is the redis slice's.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from influencer_stats.version import version
from tests.containers import LOCAL_IMAGES, SERVICE_IMAGE, Endpoint, service_container, source_revision
from tests.write_load import videos_of

DEV_MODULES = ("pytest", "mypy", "ruff", "hypothesis", "schemathesis", "matplotlib", "testcontainers")
ONE_SECOND_NS = 1_000_000_000


@pytest.fixture(scope="module")
def demo() -> Iterator[Endpoint]:
    """The image's default command, no setting given; its HEALTHCHECK probed every second."""
    with service_container({}, healthcheck={"interval": ONE_SECOND_NS}) as endpoint:
        yield endpoint


def health_of(container: Any) -> dict[str, Any]:
    return dict(container.client.api.inspect_container(container.id)["State"]["Health"])


def docker_exec(endpoint: Endpoint, *command: str) -> tuple[int, str]:
    result = endpoint.container.get_wrapped_container().exec_run(list(command))
    return int(result.exit_code), result.output.decode()


def test_image_runs_unprivileged_without_dev_packages(demo: Endpoint) -> None:
    replica = demo
    config = replica.container.get_docker_client().client.images.get(SERVICE_IMAGE).attrs["Config"]

    assert config["User"] == "10001:10001"
    assert docker_exec(replica, "id", "-u") == (0, "10001\n")
    assert config["StopSignal"] == "SIGTERM"
    assert "8080/tcp" in config["ExposedPorts"]
    assert "INFLUENCER_STATS_HOST=0.0.0.0" in config["Env"]
    assert "INFLUENCER_STATS_PROFILE=demo" in config["Env"]
    assert config["Cmd"] == ["influencer-stats"]
    probe = "import importlib.util as u, sys; print(*[m for m in sys.argv[1:] if u.find_spec(m)])"
    # The runtime's own modules are there (the probe works) ...
    assert docker_exec(replica, "python", "-c", probe, "uvicorn", "redis", "influencer_stats") == (
        0,
        "uvicorn redis influencer_stats\n",
    )
    # ... and none of the dev extra's, nor pip: nothing installs packages at run time.
    assert docker_exec(replica, "python", "-c", probe, *DEV_MODULES, "pip") == (0, "\n")
    exit_code, _ = docker_exec(replica, "python", "-c", "import pytest")
    assert exit_code == 1


def test_image_names_the_revision_it_was_built_from(demo: Endpoint) -> None:
    revision = source_revision()
    config = demo.container.get_docker_client().client.images.get(SERVICE_IMAGE).attrs["Config"]

    assert len(revision) == 40, "the tests build the image from a git checkout"
    assert config["Labels"]["org.opencontainers.image.revision"] == revision
    assert docker_exec(demo, "influencer-stats", "--version") == (
        0,
        f"influencer-stats {version()} (revision {revision})\n",
    )


def test_image_healthcheck_probes_healthz_and_turns_healthy(demo: Endpoint) -> None:
    replica = demo.container.get_wrapped_container()
    test = replica.client.images.get(SERVICE_IMAGE).attrs["Config"]["Healthcheck"]["Test"]
    assert test == ["CMD", "python", "-m", "influencer_stats.healthcheck"]  # GET /healthz where it binds

    deadline = time.monotonic() + 15
    health = health_of(replica)
    while health["Status"] != "healthy":
        assert health["Status"] == "starting", health
        assert time.monotonic() < deadline, f"not healthy within 15 s: {health}"
        time.sleep(0.2)
        health = health_of(replica)
    # The container kept the image's probe (only its interval was changed).
    assert replica.client.api.inspect_container(replica.id)["Config"]["Healthcheck"]["Test"] == test
    assert health["Log"][-1]["ExitCode"] == 0


def wait_for_health(container: Any, seconds: float) -> dict[str, Any]:
    """The container's health once it is no longer "starting" (or after ``seconds``)."""
    deadline = time.monotonic() + seconds
    health = health_of(container)
    while health["Status"] == "starting" and time.monotonic() < deadline:
        time.sleep(0.2)
        health = health_of(container)
    return health


def test_image_healthcheck_probes_the_address_the_service_binds() -> None:
    # The probe asked 127.0.0.1 whatever INFLUENCER_STATS_HOST said: a service bound to another
    # address answered, and its container was reported unhealthy. 127.0.0.2 is loopback too (Linux).
    every_second = {"interval": ONE_SECOND_NS, "retries": 1}
    with service_container({}, host="127.0.0.2", healthcheck=every_second) as bound:
        container = bound.container.get_wrapped_container()
        health = wait_for_health(container, 15)
        if LOCAL_IMAGES:  # host networking: the test reaches the address too
            assert httpx.get(f"{bound.url}/healthz", timeout=5).status_code == 200

    assert health["Status"] == "healthy", health
    assert health["Log"][-1]["ExitCode"] == 0


def test_default_command_serves_the_demo_profile_on_its_own(demo: Endpoint) -> None:
    with httpx.Client(base_url=demo.url, timeout=10) as http:
        put = http.put("/collections/demo", json={"videos": videos_of(1, 3)})
        stats = http.get("/collections/demo/stats")
        ready = http.get("/readyz")

    # The demo profile: the store's default (SQLite with its slice) in the unprivileged user's
    # home, the offline fake client.
    assert put.status_code == 201, put.text
    assert stats.status_code == 200 and stats.json()["videos"] == 3
    assert ready.status_code == 200
