"""deploy/nginx/default.conf.template forwards and logs the request id the service answers with.

The template runs in a real local nginx (``/usr/sbin/nginx``, as ``test_nginx_double``), rendered
as nginx's image renders it (each ``${VARIABLE}`` of its environment substituted), inside an
``http`` block of a standalone nginx.conf that keeps its files in a temporary folder; its access
log is written there instead of ``/var/log/nginx``. Both upstreams are one service (the default
profile). That the service's own access log names the same id (the logs join): the access_log
slice's ``test_access_log_nginx``.
"""

from __future__ import annotations

import re
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from perf.procs import free_port, stop
from tests.support import ROOT, RunningService, running_service, wait_for, wait_until_healthy

NGINX = "/usr/sbin/nginx"
TEMPLATE = ROOT / "deploy" / "nginx" / "default.conf.template"
BOUND_S = 10.0


def _rendered(template: str, env: dict[str, str]) -> str:
    """``template`` as envsubst renders it in nginx's image: only the variables it is given."""
    return re.sub(r"\$\{(\w+)\}", lambda match: env.get(match.group(1), match.group(0)), template)


def _conf(run: Path, server_block: str) -> str:
    return f"""daemon off;
worker_processes 1;
pid {run}/nginx.pid;
error_log {run}/error.log warn;
events {{ worker_connections 256; }}
http {{
    client_body_temp_path {run}/client_body;
    proxy_temp_path {run}/proxy;
    fastcgi_temp_path {run}/fastcgi;
    uwsgi_temp_path {run}/uwsgi;
    scgi_temp_path {run}/scgi;
{server_block}
}}
"""


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningService]:
    log = tmp_path_factory.mktemp("upstream") / "service.log"
    with running_service([], log) as running:
        yield running


@pytest.fixture(scope="module")
def balancer(
    upstream: RunningService, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    """nginx on the template, in front of ``upstream``: its URL and its access log."""
    run = tmp_path_factory.mktemp("nginx").resolve()
    port = free_port()
    address = upstream.url.removeprefix("http://")
    env = {"NGINX_LISTEN": f"127.0.0.1:{port}", "UPSTREAM_1": address, "UPSTREAM_2": address}
    access_log = run / "access.log"
    block = _rendered(TEMPLATE.read_text(), env).replace("/var/log/nginx/access.log", str(access_log))
    conf = run / "nginx.conf"
    conf.write_text(_conf(run, block))
    argv = [NGINX, "-c", str(conf), "-p", f"{run}/", "-e", f"{run}/error.log"]

    checked = subprocess.run([*argv, "-t"], capture_output=True, text=True, timeout=BOUND_S, check=False)
    assert checked.returncode == 0, checked.stderr
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, process)
        yield url, access_log
    finally:
        stop(process)


def nginx_ids(access_log: Path, path: str) -> list[str]:
    """The request ids nginx logged for ``path`` (its ``balancer`` format)."""
    text = access_log.read_text() if access_log.exists() else ""
    return re.findall(rf'"GET {re.escape(path)} HTTP/1.1" .* request_id=(\S+)$', text, re.MULTILINE)


def test_nginx_makes_an_id_when_the_client_sent_none_and_both_logs_name_it(
    balancer: tuple[str, Path],
) -> None:
    url, access_log = balancer
    path = f"/collections/n-{uuid.uuid4().hex}/stats"

    response = httpx.get(url + path, timeout=BOUND_S)

    assert response.status_code == 404
    request_id = response.headers["x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", request_id)  # nginx's $request_id, kept by the service
    assert wait_for(lambda: nginx_ids(access_log, path) == [request_id], BOUND_S), access_log.read_text()


@pytest.mark.parametrize(
    ("sent", "kept"), [("client-id-123", True), ("not a valid id", False), ("x" * 129, False)]
)
def test_a_client_id_the_service_accepts_is_forwarded_else_nginx_makes_one(
    balancer: tuple[str, Path], sent: str, kept: bool
) -> None:
    url, access_log = balancer
    path = f"/collections/n-{uuid.uuid4().hex}"
    sent = sent if not kept else f"{sent}-{uuid.uuid4().hex[:8]}"

    response = httpx.get(url + path, headers={"x-request-id": sent}, timeout=BOUND_S)

    request_id = response.headers["x-request-id"]
    assert (request_id == sent) is kept
    assert wait_for(lambda: nginx_ids(access_log, path) == [request_id], BOUND_S), access_log.read_text()
