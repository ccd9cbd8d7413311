"""gzip, CORS and the access log on every server: real process, real socket (issue 34).

What ``HttpApi`` decides is tested in process (``tests/unit/test_http_api_conventions.py``);
here each server must hand over ``Accept-Encoding``, ``Origin`` and
``Access-Control-Request-Method``, and write the encoded body with its length and headers.
"""

from __future__ import annotations

import gzip
import uuid
from collections.abc import Iterator

import httpx
import orjson
import pytest

from tests.support import SERVERS, RunningService, running_service, wait_for

APP = "https://app.example.com"
#: 200 distinct ids: GET /collections/{id} answers about 3 KB of JSON.
MANY = [f"v{n:010d}" for n in range(200)]


@pytest.fixture(scope="module", params=SERVERS)
def service(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningService]:
    """The default profile on each server, with CORS for ``APP`` and the access log on."""
    log = tmp_path_factory.mktemp("conventions") / "service.log"
    env = {
        "INFLUENCER_STATS_CORS_ORIGINS": f"{APP},http://localhost:3000",
        "INFLUENCER_STATS_ACCESS_LOG": "on",
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


def test_a_large_answer_is_gzipped_when_accepted_and_says_vary(client: httpx.Client) -> None:
    path = _big(client)

    zipped, sent = _raw(client, "GET", path, {"accept-encoding": "gzip"})
    plain, identity = _raw(client, "GET", path, {"accept-encoding": "identity"})

    assert zipped.status_code == plain.status_code == 200
    assert zipped.headers["content-encoding"] == "gzip"
    assert int(zipped.headers["content-length"]) == len(sent)
    assert orjson.loads(gzip.decompress(sent)) == {"videos": MANY}
    assert gzip.decompress(sent) == identity
    assert len(sent) < len(identity) / 2
    assert "content-encoding" not in plain.headers
    assert int(plain.headers["content-length"]) == len(identity)
    # CORS is on for this service: every answer varies by Origin too.
    assert zipped.headers["vary"].lower() == plain.headers["vary"].lower() == "accept-encoding, origin"


def test_head_answers_the_identity_representation(client: httpx.Client) -> None:
    path = _big(client)

    head = client.head(path, headers={"accept-encoding": "gzip"})

    assert head.status_code == 200
    assert "content-encoding" not in head.headers
    assert head.headers["vary"].lower() == "accept-encoding, origin"
    assert head.content == b""


def test_the_openapi_document_is_served_gzipped(client: httpx.Client) -> None:
    response, sent = _raw(client, "GET", "/openapi.json", {"accept-encoding": "br;q=1, gzip;q=0.5"})

    assert response.headers["content-encoding"] == "gzip"
    assert orjson.loads(gzip.decompress(sent))["openapi"] == "3.1.0"
    assert len(sent) < 20_000


def test_a_small_answer_is_left_alone(client: httpx.Client) -> None:
    response, sent = _raw(client, "GET", "/healthz", {"accept-encoding": "gzip"})

    assert "content-encoding" not in response.headers
    assert orjson.loads(sent) == {"status": "ok"}


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


def test_each_request_is_one_access_line_with_its_id(client: httpx.Client, service: RunningService) -> None:
    request_id = "acc-" + uuid.uuid4().hex[:12]

    response = client.get("/collections/none-such/stats", headers={"x-request-id": request_id})
    unmatched = client.get("/nowhere", headers={"x-request-id": request_id + "-u"})

    assert response.status_code == unmatched.status_code == 404

    def lines() -> list[dict[str, object]]:
        found = [orjson.loads(line) for line in service.output().splitlines() if request_id in line]
        return [line for line in found if line.get("event") == "http.access"]

    assert wait_for(lambda: len(lines()) == 2, 10), service.output()[-3000:]
    routed, refused = sorted(lines(), key=lambda line: str(line["request_id"]))
    assert routed["request_id"] == request_id == response.headers["x-request-id"]
    assert (routed["method"], routed["route"], routed["status"]) == ("GET", "/collections/{id}/stats", 404)
    assert isinstance(routed["duration_ms"], float)
    assert routed["level"] == "info"
    assert (refused["route"], refused["status"]) == ("unmatched", 404)
