"""The container helpers start real servers that answer on the endpoints they report."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap
from contextlib import suppress

import docker.errors
import httpx
import pytest

from tests.containers import (
    LOCAL_IMAGES,
    LOCAL_REDIS,
    TEST_PID_LABEL,
    nginx_server,
    python_aiohttp_server,
    redis_command,
    redis_server,
    require_docker,
)
from tests.support import ROOT


def test_redis_stores_and_returns_values() -> None:
    with redis_server() as redis:
        assert redis_command(redis.host, redis.port, "PING") == b"PONG"
        assert redis_command(redis.host, redis.port, "SET", "greeting", "hello\r\nworld") == b"OK"
        assert redis_command(redis.host, redis.port, "GET", "greeting") == b"hello\r\nworld"
        assert redis_command(redis.host, redis.port, "GET", "missing") is None
        assert redis.url == f"redis://{redis.host}:{redis.port}"
        client = redis.container.get_docker_client().client
        container_id = redis.container.get_container_id()
    # Ryuk is off with local images: leaving the context must remove the container.
    assert client.containers.list(all=True, filters={"id": container_id}) == []


NGINX_TEMPLATE = """
server {
    listen ${NGINX_LISTEN};
    root /usr/share/nginx/html;
    location = /healthz { return 200 "port ${NGINX_PORT}"; }
    location / { add_header X-Uri $uri; try_files $uri $uri/ =404; }
}
"""


def test_nginx_serves_site_dir_with_rendered_template(tmp_path: pathlib.Path) -> None:
    (tmp_path / "index.html").write_text("<h1>home</h1>\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "stats.json").write_text('{"views": 42}\n')

    with nginx_server(tmp_path, NGINX_TEMPLATE, health_path="/healthz") as nginx:
        index = httpx.get(f"{nginx.url}/")
        stats = httpx.get(f"{nginx.url}/data/stats.json")
        health = httpx.get(f"{nginx.url}/healthz")
        missing = httpx.get(f"{nginx.url}/nope.html")

    assert (index.status_code, index.text) == (200, "<h1>home</h1>\n")
    assert (stats.status_code, stats.text) == (200, '{"views": 42}\n')
    # Variables from the environment are substituted; nginx's own ($uri) are left for nginx.
    assert health.text == f"port {nginx.container.env['NGINX_PORT']}"
    assert stats.headers["X-Uri"] == "/data/stats.json"
    assert missing.status_code == 404


DBL_MAIN = """
import argparse

from aiohttp import web

parser = argparse.ArgumentParser()
parser.add_argument("--host")
parser.add_argument("--port", type=int)
parser.add_argument("--factor", type=int)
options = parser.parse_args()


async def healthz(request):
    return web.Response(text="ok")


async def times(request):
    n = int(request.match_info["n"])
    return web.json_response({"n": n, "result": n * options.factor})


app = web.Application()
app.router.add_get("/healthz", healthz)
app.router.add_get("/times/{n}", times)
web.run_app(app, host=options.host, port=options.port)
"""


def test_python_aiohttp_server_runs_a_copied_package(tmp_path: pathlib.Path) -> None:
    package = tmp_path / "dbl"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(textwrap.dedent(DBL_MAIN))

    with python_aiohttp_server([package], "dbl", ["--factor", "2"], "/healthz") as server:
        health = httpx.get(f"{server.url}/healthz")
        times = httpx.get(f"{server.url}/times/21")

    assert (health.status_code, health.text) == (200, "ok")
    assert times.json() == {"n": 21, "result": 42}


def test_setting_up_docker_again_removes_only_the_leftovers_of_test_processes_that_are_gone() -> None:
    # scripts/docker-up.sh runs before every `make test`: a run beside another (two terminals,
    # two CI jobs) must keep the containers the other is using, and a killed run's must go.
    require_docker()
    if not LOCAL_IMAGES:
        pytest.skip("docker-up.sh removes leftovers only on an engine it started (as in CI)")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    with redis_server() as ours:
        client = ours.container.get_docker_client().client
        assert ours.container.get_wrapped_container().labels[TEST_PID_LABEL] == str(os.getpid())
        # What a killed run leaves behind: a container of a test process that no longer exists.
        leftover = client.containers.run(
            LOCAL_REDIS,
            ["redis-server", "--port", "0"],
            detach=True,
            network_mode="none",
            labels={TEST_PID_LABEL: str(gone.pid)},
        )
        try:
            up = subprocess.run(
                ["scripts/docker-up.sh"], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
            )
            remaining = {c.id for c in client.containers.list(all=True)}
        finally:
            with suppress(docker.errors.NotFound):
                leftover.remove(force=True)

        assert up.returncode == 0, up.stderr
        assert leftover.id not in remaining
        assert ours.container.get_wrapped_container().id in remaining
