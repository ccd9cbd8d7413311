"""Real Redis, nginx and aiohttp servers in containers for the integration tests.

Two modes, chosen by ``IT_LOCAL_IMAGES`` (``eval "$(scripts/docker-up.sh)"`` sets it):

* ``1``: the ``local/*`` images built by scripts/docker-up.sh (CI machines cannot
  reach Docker Hub), host networking, each service bound to 127.0.0.1 on a free port
  picked here, Ryuk (the reaper, itself a Docker Hub image) disabled.
* ``0``: official images (redis:7-alpine, nginx:1.27-alpine, python:3.11-slim) with
  normal port mapping and Ryuk: a developer's Docker Desktop.
* unset: ``1`` if the image local/redis:7 exists, else ``0``.

Why host mode needs ``HostNetworkMixin``: see its docstring.
"""

from __future__ import annotations

import functools
import gc
import importlib
import os
import pathlib
import socket
import subprocess
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from typing import Any, Self

LOCAL_REDIS = "local/redis:7"


def _engine_has(probe: Callable[[Any], object]) -> bool:
    """Whether `probe(docker_client)` succeeds: False on any failure, e.g. no engine."""
    # docker-py leaks its socket when no engine answers; under pytest's
    # filterwarnings=error that ResourceWarning would fail some unrelated test.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            # docker-py ships no type hints; importlib keeps mypy --strict quiet.
            client = importlib.import_module("docker").from_env(timeout=5)
            try:
                return bool(probe(client))
            finally:
                client.close()
        except Exception:  # noqa: BLE001 - whatever failed, the answer is "no"
            return False
        finally:
            gc.collect()


def _want_local_images() -> bool:
    flag = os.environ.get("IT_LOCAL_IMAGES")
    if flag is not None:
        return flag == "1"
    return _engine_has(lambda client: client.images.get(LOCAL_REDIS))


LOCAL_IMAGES = _want_local_images()
if LOCAL_IMAGES:
    # Set before testcontainers is imported (it reads its configuration from the
    # environment); Ryuk's image would be pulled from Docker Hub.
    os.environ["TESTCONTAINERS_RYUK_DISABLED"] = "true"

from testcontainers.core.container import DockerContainer  # noqa: E402
from testcontainers.core.image import DockerImage  # noqa: E402
from testcontainers.core.wait_strategies import HttpWaitStrategy, LogMessageWaitStrategy  # noqa: E402
from testcontainers.core.waiting_utils import WaitStrategy, WaitStrategyTarget  # noqa: E402

STARTUP_TIMEOUT_S = 30  # testcontainers' default is 120 s
POLL_S = 0.1  # default 1 s
DOCKER_DIR = pathlib.Path(__file__).resolve().parents[1] / "docker"


@functools.cache
def docker_available() -> bool:
    """Whether a Docker engine answers (checked once per process)."""
    return _engine_has(lambda client: client.ping())


def require_docker() -> None:
    """Fail loudly under CI=true when no engine answers (a skipped test checks nothing); skip elsewhere."""
    if docker_available():
        return
    message = 'no Docker engine answers: run `eval "$(scripts/docker-up.sh)" && export IT_LOCAL_IMAGES`'
    if os.environ.get("CI", "").lower() == "true":
        raise RuntimeError(message)
    import pytest

    pytest.skip(message)


#: The label naming the test process a container belongs to (see ``HostNetworkMixin.start``).
TEST_PID_LABEL = "influencer-stats.test-pid"


class HostNetworkMixin(DockerContainer):
    """Makes a DockerContainer (or subclass) usable with ``network_mode="host"``.

    There docker-py refuses port bindings (``InvalidArgument``), and the host/port
    lookups every wait strategy uses fail: no port mapping exists, and the host IP
    comes back as '' inside a container. With host networking the service listens on
    the host's 127.0.0.1 at its own port, so answer with exactly that.
    """

    @property
    def host_network(self) -> bool:
        return bool(self._kwargs.get("network_mode") == "host")

    def start(self) -> Self:
        if self.host_network:
            self.ports.clear()
        # Whose it is: scripts/docker-up.sh removes a leftover only once this process is gone.
        self._kwargs.setdefault("labels", {})[TEST_PID_LABEL] = str(os.getpid())
        return super().start()

    def get_container_host_ip(self) -> str:
        return "127.0.0.1" if self.host_network else super().get_container_host_ip()

    def get_exposed_port(self, port: int) -> int:
        return port if self.host_network else super().get_exposed_port(port)


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int
    scheme: str
    container: DockerContainer  # for logs while debugging a test

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _container(image: str, port: int, wait: WaitStrategy) -> HostNetworkMixin:
    """Host network on `port` with local images, else `port` mapped to a random host port."""
    wait = wait.with_startup_timeout(STARTUP_TIMEOUT_S).with_poll_interval(POLL_S)
    if LOCAL_IMAGES:
        return HostNetworkMixin(image, network_mode="host", _wait_strategy=wait)
    return HostNetworkMixin(image, ports=[port], _wait_strategy=wait)


@contextmanager
def _running(container: HostNetworkMixin, port: int, scheme: str) -> Iterator[Endpoint]:
    with container:
        host = container.get_container_host_ip()
        yield Endpoint(host, container.get_exposed_port(port), scheme, container)


def redis_command(host: str, port: int, *args: str, timeout: float = 2.0) -> bytes | None:
    """Send one command with RESP; return a status/integer/bulk reply (None for nil)."""
    request = f"*{len(args)}\r\n" + "".join(f"${len(a.encode())}\r\n{a}\r\n" for a in args)
    data = b""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(request.encode())
        while True:
            head, sep, rest = data.partition(b"\r\n")
            if sep:  # complete: one line, plus for a bulk string ($<size>) its data and CRLF
                size = int(head[1:]) if head[:1] == b"$" else -1
                if size < 0 or len(rest) >= size + 2:
                    break
            chunk = sock.recv(65536)
            if not chunk:
                raise ConnectionError("redis closed the connection")
            data += chunk
    if head[:1] == b"-":
        raise RuntimeError(head[1:].decode())
    if head[:1] == b"$":
        size = int(head[1:])
        return None if size < 0 else rest[:size]
    return head[1:]


class RedisPingWaitStrategy(WaitStrategy):
    """testcontainers' redis PING wait needs redis-py, which the project does not use."""

    def __init__(self, port: int) -> None:
        super().__init__()
        self._port = port
        self.with_transient_exceptions(OSError)

    def wait_until_ready(self, container: WaitStrategyTarget) -> None:
        host, port = container.get_container_host_ip(), container.get_exposed_port(self._port)
        if not self._poll(lambda: redis_command(host, port, "PING") == b"PONG"):
            raise TimeoutError(f"redis on {host}:{port} did not answer PING")


@contextmanager
def redis_server(extra_args: Sequence[str] = ()) -> Iterator[Endpoint]:
    """A throwaway Redis without RDB snapshots; `extra_args` are added to its command line
    (e.g. ``--appendonly yes``)."""
    require_docker()
    if LOCAL_IMAGES:
        port, image = _free_port(), LOCAL_REDIS
        command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", *extra_args]
    else:
        port, image = 6379, "redis:7-alpine"
        command = ["redis-server", "--save", "", *extra_args]
    container = _container(image, port, RedisPingWaitStrategy(port)).with_command(command)
    with _running(container, port, "redis") as endpoint:
        yield endpoint


@contextmanager
def nginx_server(
    site_dir: pathlib.Path,
    conf_template: str,
    health_path: str = "/",
    *,
    env: Mapping[str, str] | None = None,
) -> Iterator[Endpoint]:
    """nginx serving `site_dir` with `conf_template` as its only server block.

    The template is rendered by envsubst in the container; it gets NGINX_PORT (the
    port) and NGINX_LISTEN (``127.0.0.1:PORT`` in host mode, else the port): write
    ``listen ${NGINX_LISTEN};`` to stay on loopback on CI. `env` adds variables (e.g.
    upstream addresses from :func:`peer_address`, which this nginx can then reach).
    """
    require_docker()
    port = _free_port() if LOCAL_IMAGES else 80
    image = "local/nginx:1.27" if LOCAL_IMAGES else "nginx:1.27-alpine"
    listen = f"127.0.0.1:{port}" if LOCAL_IMAGES else str(port)
    wait = HttpWaitStrategy(port, health_path)
    container = (
        (_container(image, port, wait) if env is None else _peer_container(image, port, wait))
        .with_envs(**(env or {}))
        .with_envs(NGINX_PORT=str(port), NGINX_LISTEN=listen)
        .with_copy_into_container(conf_template.encode(), "/etc/nginx/templates/default.conf.template")
    )
    # A directory would land in html/<site_dir.name>/, so copy file by file.
    for path in sorted(p for p in site_dir.rglob("*") if p.is_file()):
        destination = f"/usr/share/nginx/html/{path.relative_to(site_dir).as_posix()}"
        container.with_copy_into_container(path, destination)
    with _running(container, port, "http") as endpoint:
        yield endpoint


@functools.cache
def _python_image() -> str:
    if LOCAL_IMAGES:
        return "local/python-aiohttp:3.11"
    tag = "influencer-stats/python-aiohttp:3.11"
    base = {"BASE": "python:3.11-slim"}  # see docker/python-aiohttp/Dockerfile
    DockerImage(DOCKER_DIR / "python-aiohttp", tag=tag, clean_up=False, buildargs=base).build()
    return tag


@contextmanager
def python_aiohttp_server(
    package_dirs: Sequence[pathlib.Path], module: str, args: list[str], health_path: str
) -> Iterator[Endpoint]:
    """`python3 -m module --host H --port P *args` with each of `package_dirs` importable (/app/<name>)."""
    require_docker()
    port, bind = (_free_port(), "127.0.0.1") if LOCAL_IMAGES else (8080, "0.0.0.0")
    command = ["python3", "-m", module, "--host", bind, "--port", str(port), *args]
    container = (
        _container(_python_image(), port, HttpWaitStrategy(port, health_path))
        .with_command(command)
        .with_env("PYTHONPATH", "/app")
    )
    for package_dir in package_dirs:
        container.with_copy_into_container(package_dir, "/app")
    with _running(container, port, "http") as endpoint:
        yield endpoint


REPO_ROOT = DOCKER_DIR.parent
SERVICE_IMAGE = "influencer-stats:test"
LOCAL_PYTHON = "local/python:3.11"
# With port mapping (official images), containers reach each other's published ports through
# the host; Docker Desktop names it host.docker.internal, a Linux engine needs the entry added.
_HOST_GATEWAY = {"host.docker.internal": "host-gateway"}


def peer_address(endpoint: Endpoint) -> str:
    """``host:port`` at which another container (started by a helper here) reaches `endpoint`."""
    host = "127.0.0.1" if LOCAL_IMAGES else "host.docker.internal"
    return f"{host}:{endpoint.port}"


def _peer_container(image: str, port: int, wait: WaitStrategy, **kwargs: Any) -> HostNetworkMixin:
    """Like `_container`, able to reach other containers at their :func:`peer_address`."""
    wait = wait.with_startup_timeout(STARTUP_TIMEOUT_S).with_poll_interval(POLL_S)
    if LOCAL_IMAGES:
        return HostNetworkMixin(image, network_mode="host", _wait_strategy=wait, **kwargs)
    return HostNetworkMixin(image, ports=[port], _wait_strategy=wait, extra_hosts=_HOST_GATEWAY, **kwargs)


def source_revision() -> str:
    """The checkout's commit, as the README's build line passes it (``--build-arg REVISION=``);
    "" outside a git repository (the build then writes none)."""
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=False
    )
    return done.stdout.strip() if done.returncode == 0 else ""


@functools.cache
def service_image() -> str:
    """The service's image, built from the repository's Dockerfile and tagged SERVICE_IMAGE.

    BASE is local/python:3.11 (scripts/docker-up.sh) with local images, else the Dockerfile's
    default (python:3.11-slim). Built once per test session; Docker's layer cache keeps a
    rebuild to seconds unless requirements/run.txt changed (the dependencies are a layer of their own).
    """
    require_docker()
    buildargs, network = ({"BASE": LOCAL_PYTHON}, "host") if LOCAL_IMAGES else ({}, None)
    buildargs["REVISION"] = source_revision()
    docker = importlib.import_module("docker")
    # Generous read timeout: a step installing the dependencies may print nothing for a while.
    client = docker.from_env(timeout=600)
    try:
        try:
            previous = client.images.get(SERVICE_IMAGE).id
        except docker.errors.ImageNotFound:
            previous = None
        # docker-py builds with the legacy builder, which honours network_mode ("host": no bridge here).
        image, _ = client.images.build(
            path=str(REPO_ROOT),
            tag=SERVICE_IMAGE,
            buildargs=buildargs,
            network_mode=network,
            rm=True,
            forcerm=True,
        )
        # A rebuild leaves the former image untagged: remove it (and its layers no other image
        # uses) rather than let every code change add one. Still used by a container: kept.
        if previous is not None and previous != image.id:
            with suppress(docker.errors.APIError):
                client.images.remove(previous)
    except docker.errors.BuildError as error:
        log = "".join(str(chunk.get("stream") or chunk.get("error") or "") for chunk in error.build_log)
        raise RuntimeError(f"building {SERVICE_IMAGE} failed: {error}\n{log[-3000:]}") from None
    finally:
        client.close()
    return SERVICE_IMAGE


@contextmanager
def service_container(
    env: Mapping[str, str],
    command: Sequence[str] | None = None,
    *,
    health_path: str = "/healthz",
    healthcheck: Mapping[str, Any] | None = None,
    host: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> Iterator[Endpoint]:
    """A container of :func:`service_image` (its default command unless `command`) on its own port.

    Gets `env` plus INFLUENCER_STATS_HOST/PORT for its address (loopback and a free port with
    host networking, else the image's 0.0.0.0:8080 mapped); a `command` gets ``--host H --port P``
    instead. `healthcheck` overrides the image's HEALTHCHECK options (fields left out keep the
    image's, ``{"test": ["NONE"]}`` turns it off). A `host` binds that address instead; the wait
    is then for the service's start-up line (the HTTP wait would knock on 127.0.0.1); with host
    networking the endpoint's host is `host`, with port mapping the service is out of reach
    (it listens on the container's own `host`) and only its health can be checked. `options` are
    more of docker run's (docker-py's names: ``read_only``, ``tmpfs``, ``user``, ``cap_drop`` …).
    """
    require_docker()
    port, default_host = (_free_port(), "127.0.0.1") if LOCAL_IMAGES else (8080, "0.0.0.0")
    wait: WaitStrategy = HttpWaitStrategy(port, health_path)
    if host is not None:
        wait = LogMessageWaitStrategy(f"influencer-stats: listening on http://{host}:{port} ")
    host = host or default_host
    extra: dict[str, Any] = {} if healthcheck is None else {"healthcheck": dict(healthcheck)}
    extra |= options or {}
    tmpfs = extra.pop("tmpfs", {})  # testcontainers passes its own: path → mount options
    container = _peer_container(service_image(), port, wait, **extra)
    container.tmpfs.update(tmpfs)
    if command is None:
        container.with_envs(**{**env, "INFLUENCER_STATS_HOST": host, "INFLUENCER_STATS_PORT": str(port)})
    else:
        container.with_envs(**env).with_command([*command, "--host", host, "--port", str(port)])
    with _running(container, port, "http") as endpoint:
        yield replace(endpoint, host=host) if LOCAL_IMAGES and host != default_host else endpoint
