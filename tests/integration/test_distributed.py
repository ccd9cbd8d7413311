"""The ``distributed`` profile: worker processes sharing one real Redis.

- (Two services on two ports agreeing after writes through either, over each
  shared stats cache: test_distributed_caches.py, the ``stats_cache`` slice's.)
- ``uvicorn main:app --workers 2``: one port, requests on either worker.
- (``distributed --workers 2`` (main.py), read-your-writes of stats across workers: the joint
  ``redis__workers``'s test_distributed_workers.py.)
- Redis down (frozen, or killed and restarted from its append-only file):
  503 problems within about a second, ``/healthz`` still 200, ``/readyz`` 503
  naming redis; then recovery without a restart and nothing acknowledged lost.
- Redis's connections reset under the service (each server): the request that
  meets a reset connection is answered from a fresh one, never a 503 nor a 500.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from tests.containers import (
    LOCAL_IMAGES,
    LOCAL_REDIS,
    HostNetworkMixin,
    RedisPingWaitStrategy,
    redis_command,
    redis_server,
    require_docker,
)
from tests.integration.resetting_relay import ResettingRelay
from tests.support import (
    SERVERS,
    RunningService,
    every_worker_started,
    expected_stats,
    free_port,
    profile_args,
    profile_env,
    running_service,
    wait_for,
)

FAKE_VIDEOS = {"INFLUENCER_STATS_VIDEO_CLIENT": "fake"}
PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    """One Redis for the module; each test uses its own database number."""
    with redis_server() as redis:
        yield redis.url


def videos_of(n: int) -> list[str]:
    """A collection of ``n`` distinct videos: each write changes the statistics."""
    return [synthetic_video_id(n * 100 + k) for k in range(n)]


def test_uvicorn_with_two_workers_answers_every_read_with_the_latest_write(
    redis_url: str, tmp_path: Path
) -> None:
    command = [sys.executable, "-m", "uvicorn", "main:app", "--workers", "2", "--log-level", "warning"]
    env = {**FAKE_VIDEOS, **profile_env("distributed"), "REDIS_URL": f"{redis_url}/2"}
    # A new connection per request, so the kernel hands requests to either worker.
    one_shot = httpx.Limits(max_keepalive_connections=0)
    with (
        running_service([], tmp_path / "uvicorn.log", env=env, command=command) as service,
        httpx.Client(base_url=service.url, timeout=10, limits=one_shot) as http,
    ):
        every_worker_started(service.output, 2)
        for n in range(1, 41):
            videos = videos_of(n % 7)
            assert http.put("/collections/multi", json={"videos": videos}).status_code in (200, 201)
            assert http.get("/collections/multi/stats").json() == expected_stats(videos)
            assert http.get("/collections/multi").json() == {"videos": videos}


# --- Redis down -----------------------------------------------------------------


@contextmanager
def persistent_redis() -> Iterator[tuple[HostNetworkMixin, str]]:
    """A Redis on a fixed port that fsyncs every write to its append-only file.

    Its data lives in the container, so a killed container restarts with it.
    """
    require_docker()
    port = free_port()
    aof = ["--appendonly", "yes", "--appendfsync", "always", "--save", ""]
    if LOCAL_IMAGES:
        wait = RedisPingWaitStrategy(port).with_startup_timeout(30).with_poll_interval(0.1)
        command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", *aof]
        container = HostNetworkMixin(LOCAL_REDIS, network_mode="host", _wait_strategy=wait)
    else:  # a fixed host port: a restarted container must come back where the service looks
        wait = RedisPingWaitStrategy(6379).with_startup_timeout(30).with_poll_interval(0.1)
        command = ["redis-server", *aof]
        container = HostNetworkMixin("redis:7-alpine", _wait_strategy=wait).with_bind_ports(6379, port)
    with container.with_command(command):
        yield container, f"redis://127.0.0.1:{port}"


def _timed(request: httpx.Request, http: httpx.Client) -> tuple[httpx.Response, float]:
    start = time.monotonic()
    response = http.send(request)
    return response, time.monotonic() - start


OUTAGE_REQUESTS: list[tuple[str, str, dict[str, list[str]] | None]] = [
    ("GET", "/collections/k0", None),
    ("GET", "/collections/k0/stats", None),
    ("PUT", "/collections/during-outage", {"videos": []}),
    ("DELETE", "/collections/k1", None),
    ("GET", "/collections", None),
]


def _assert_unavailable(service: RunningService, http: httpx.Client) -> None:
    for method, path, body in OUTAGE_REQUESTS:
        response, elapsed = _timed(http.build_request(method, service.url + path, json=body), http)
        assert response.status_code == 503, (method, path, response.text)
        assert response.headers["content-type"] == PROBLEM
        assert response.json()["type"] == "urn:influencer-stats:problem:store-unavailable"
        assert "127.0.0.1" not in response.text
        assert elapsed < 1.5, (method, path, elapsed)  # two Redis calls at most, 0.5 s timeout each

    health, elapsed = _timed(http.build_request("GET", service.url + "/healthz"), http)
    assert (health.status_code, health.json()) == (200, {"status": "ok"})
    assert elapsed < 0.2
    ready, elapsed = _timed(http.build_request("GET", service.url + "/readyz"), http)
    assert ready.status_code == 503
    assert elapsed < 1.0
    assert ready.json()["checks"] == {"redis": "failing"}
    assert "redis" in ready.json()["detail"]


@pytest.mark.parametrize("outage", ["frozen", "killed"])
def test_while_redis_is_down_requests_fail_fast_and_afterwards_the_service_recovers_by_itself(
    outage: str, tmp_path: Path
) -> None:
    written = {f"k{n}": videos_of(n % 5) for n in range(20)}
    with persistent_redis() as (container, url):
        env = {**FAKE_VIDEOS, "REDIS_URL": url}
        with (
            running_service(profile_args("distributed"), tmp_path / "svc.log", env=env) as service,
            httpx.Client(timeout=10) as http,
        ):
            for cid, videos in written.items():
                assert (
                    http.put(f"{service.url}/collections/{cid}", json={"videos": videos}).status_code == 201
                )
                assert http.get(f"{service.url}/collections/{cid}/stats").status_code == 200
            assert http.get(service.url + "/readyz").json() == {"status": "ready", "checks": {"redis": "ok"}}

            docker = container.get_wrapped_container()
            if outage == "frozen":
                docker.pause()  # the process stops answering; connections hang, not refused
            else:
                docker.kill()  # SIGKILL: no shutdown, no final fsync
                docker.wait(timeout=10)
            _assert_unavailable(service, http)

            if outage == "frozen":
                docker.unpause()
            else:
                docker.start()  # same port, data from the append-only file
            assert wait_for(lambda: http.get(service.url + "/readyz").status_code == 200, 20), (
                service.output()
            )

            assert http.get(service.url + "/readyz").json()["checks"] == {"redis": "ok"}
            # The requests answered 503 may have landed in part (a frozen Redis runs the
            # commands that reached it once it thaws): a client repeats them.
            put = http.put(f"{service.url}/collections/during-outage", json={"videos": []})
            assert put.status_code in (200, 201)
            assert http.delete(f"{service.url}/collections/k1").status_code == 204
            del written["k1"]
            written["during-outage"] = []
            assert http.get(f"{service.url}/collections").json() == {"ids": sorted(written)}
            for cid, videos in written.items():
                assert http.get(f"{service.url}/collections/{cid}").json() == {"videos": videos}
                assert http.get(f"{service.url}/collections/{cid}/stats").json() == expected_stats(videos)
            assert http.put(f"{service.url}/collections/after", json={"videos": []}).status_code == 201
        assert "Traceback" not in service.output()
        failed = [e for e in _events(service.output()) if e["event"] == "request.failed"]
        assert {(e["level"], e["status"], e["problem"]) for e in failed} == {  # each 503 heard of
            ("warning", 503, "urn:influencer-stats:problem:store-unavailable"),
            ("warning", 503, "urn:influencer-stats:problem:not-ready"),  # /readyz, naming redis
        }
        assert all(e["request_id"] for e in failed)
        host, port = url.removeprefix("redis://").split(":")
        assert redis_command(host, int(port), "EXISTS", "is:col:{after}") == b"1"


def _events(output: str) -> list[dict[str, Any]]:
    """The JSON log lines of a service's output."""
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("server", SERVERS)
def test_a_request_that_meets_a_reset_redis_connection_is_answered_from_a_fresh_one(
    server: str, redis_url: str, tmp_path: Path
) -> None:
    # A write to a connection Redis's side reset while it sat in the pool: on uvloop (every
    # server here runs on it) the write raised RuntimeError("unable to perform operation on
    # <TCPTransport closed=True ...>"), which no Redis interpreter took for a Redis fault:
    # a 500 (5 PUTs in 3,400 when Redis was killed mid-run; here every time); then a 503,
    # until a connection found closed was replaced before the command was sent on it.
    host, port = redis_url.removeprefix("redis://").split(":")
    database = 3 + SERVERS.index(server)
    # No metrics: their dependency checks' PING every 2 s could meet the reset connection first.
    argv = ["--server", server, "--store", "redis", "--logger", "all", "--metrics", "none"]
    requests = [
        ("PUT", "/collections/reset", {"videos": videos_of(3)}, 200),
        ("GET", "/collections/reset", None, 200),
        ("GET", "/collections/reset/stats", None, 200),
        ("GET", "/collections", None, 200),
        ("DELETE", "/collections/reset", None, 204),
    ]
    with (
        ResettingRelay((host, int(port))) as relay,
        running_service(
            argv,
            tmp_path / "svc.log",
            env={**FAKE_VIDEOS, "REDIS_URL": f"redis://127.0.0.1:{relay.port}/{database}"},
        ) as service,
        httpx.Client(base_url=service.url, timeout=10) as http,
    ):
        assert http.put("/collections/reset", json={"videos": videos_of(2)}).status_code == 201
        for method, path, body, status in requests:
            assert relay.reset() >= 1, "no pooled connection to reset"
            first = http.request(method, path, json=body)

            assert first.status_code == status, (method, path, first.status_code, first.text)
        assert http.get("/collections/reset").status_code == 404
        assert http.get("/readyz").status_code == 200
    assert "http.unhandled_error" not in service.output()
    assert "Traceback" not in service.output()
