"""CORS (the ``cors`` slice) on every server: real process, real socket (issue 34).

What ``HttpApi`` decides is tested in process (``tests/unit/test_http_api_cors.py``); here each server
must hand over ``Origin`` and ``Access-Control-Request-Method``, and write the preflight's 204 and the
headers.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.integration.edge_support import MANY, big, client, serving
from tests.support import SERVERS, RunningService

APP = "https://app.example.com"
__all__ = ["client"]  # edge_support's fixture, which this module's tests take


@pytest.fixture(scope="module", params=SERVERS)
def service(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningService]:
    """The default profile on each server, with CORS for ``APP`` and answers of 1 KiB and more gzipped."""
    with serving(
        request,
        tmp_path_factory,
        {
            "INFLUENCER_STATS_CORS_ORIGINS": f"{APP},http://localhost:3000",
            "INFLUENCER_STATS_GZIP_MIN_BYTES": "1024",
        },
    ) as running:
        yield running


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
    path = big(client)

    response = client.get(path, headers={"origin": "http://localhost:3000", "accept-encoding": "gzip"})

    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "http://localhost:3000"
    exposed = {name.strip() for name in response.headers["access-control-expose-headers"].split(",")}
    assert {"x-request-id", "etag", "link", "retry-after"} <= exposed
    assert response.headers["vary"].lower() == "accept-encoding, origin"
    assert response.json() == {"videos": MANY}
