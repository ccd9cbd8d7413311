"""CORS (the ``cors`` slice) on every server: real process, real socket (issue 34).

What ``HttpApi`` decides is tested in process (``tests/unit/test_http_api_cors.py``); here each server
must hand over ``Origin`` and ``Access-Control-Request-Method``, and write the preflight's 204 and the
headers.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.support import SERVERS, RunningService, running_service

APP = "https://app.example.com"
#: 200 distinct ids: GET /collections/{id} answers about 3 KB of JSON.
MANY = [f"v{n:010d}" for n in range(200)]


@pytest.fixture(scope="module", params=SERVERS)
def service(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningService]:
    """The default profile on each server, with CORS for ``APP`` and answers of 1 KiB and more gzipped."""
    log = tmp_path_factory.mktemp("conventions") / "service.log"
    env = {
        "INFLUENCER_STATS_CORS_ORIGINS": f"{APP},http://localhost:3000",
        "INFLUENCER_STATS_GZIP_MIN_BYTES": "1024",
    }
    with running_service(["--server", request.param], log, env=env) as running:
        yield running


@pytest.fixture
def client(service: RunningService) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.url, timeout=10) as c:
        yield c


def _big(client: httpx.Client) -> str:
    cid = "c-" + uuid.uuid4().hex
    assert client.put(f"/collections/{cid}", json={"videos": MANY}).status_code == 201
    return f"/collections/{cid}"


def _raw(
    client: httpx.Client, method: str, path: str, headers: dict[str, str]
) -> tuple[httpx.Response, bytes]:
    """The response and its body as sent (httpx decodes gzip for ``content``)."""
    with client.stream(method, path, headers=headers) as response:
        return response, b"".join(response.iter_raw())


def test_a_preflight_from_an_allowed_origin_is_a_204_with_the_cors_headers(client: httpx.Client) -> None:
    response = client.options(
        "/collections/c",
        headers={
            "origin": APP,
            "access-control-request-method": "PUT",
            "access-control-request-headers": "authorization, content-type",
        },
    )

    assert response.status_code == 204
    assert response.content == b""
    assert response.headers["access-control-allow-origin"] == APP
    assert set(response.headers["access-control-allow-methods"].split(", ")) == {
        "GET",
        "HEAD",
        "PUT",
        "DELETE",
    }
    assert {"authorization", "content-type"} <= set(
        response.headers["access-control-allow-headers"].split(", ")
    )
    assert int(response.headers["access-control-max-age"]) > 0
    assert "origin" in response.headers["vary"].lower()


def test_a_preflight_from_another_origin_gets_no_cors_header(client: httpx.Client) -> None:
    response = client.options(
        "/collections/c", headers={"origin": "https://evil.example", "access-control-request-method": "PUT"}
    )

    assert response.status_code == 405
    assert not [name for name in response.headers if name.lower().startswith("access-control-")]


def test_an_answer_to_an_allowed_origin_exposes_the_api_headers(client: httpx.Client) -> None:
    path = _big(client)

    response = client.get(path, headers={"origin": "http://localhost:3000", "accept-encoding": "gzip"})

    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "http://localhost:3000"
    exposed = {name.strip() for name in response.headers["access-control-expose-headers"].split(",")}
    assert {"x-request-id", "etag", "link", "retry-after"} <= exposed
    assert response.headers["vary"].lower() == "accept-encoding, origin"
    assert response.json() == {"videos": MANY}
