"""What the edge's suites over every server share (gzip: test_conventions_http; the cors and
access_log slices' test_cors_http and test_access_log_http): a service on each server with the
settings a suite gives, a client of it, a large collection, and a body as it was sent."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import httpx
import pytest

from tests.support import RunningService, running_service

#: 200 distinct ids: GET /collections/{id} answers about 3 KB of JSON.
MANY = [f"v{n:010d}" for n in range(200)]


@contextmanager
def serving(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, env: Mapping[str, str]
) -> Iterator[RunningService]:
    """The default profile on the server ``request.param`` names, with ``env``."""
    log = tmp_path_factory.mktemp("edge") / "service.log"
    with running_service(["--server", request.param], log, env=dict(env)) as running:
        yield running


@pytest.fixture
def client(service: RunningService) -> Iterator[httpx.Client]:
    """A client of the module's ``service``."""
    with httpx.Client(base_url=service.url, timeout=10) as c:
        yield c


def big(client: httpx.Client) -> str:
    """A new collection of ``MANY`` ids, and its path."""
    cid = "c-" + uuid.uuid4().hex
    assert client.put(f"/collections/{cid}", json={"videos": MANY}).status_code == 201
    return f"/collections/{cid}"


def raw(
    client: httpx.Client, method: str, path: str, headers: dict[str, str]
) -> tuple[httpx.Response, bytes]:
    """The response and its body as sent (httpx decodes gzip for ``content``)."""
    with client.stream(method, path, headers=headers) as response:
        return response, b"".join(response.iter_raw())
