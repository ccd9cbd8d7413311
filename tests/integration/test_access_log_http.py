"""The access log (the ``access_log`` slice) on every server: real process, real socket (issue 34).

What ``HttpApi`` decides is tested in process (``tests/unit/test_http_api_access_log.py``); here each server
must hand over the request id, and the service log its line.
"""

from __future__ import annotations

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
    """The default profile on each server, with the access log on."""
    log = tmp_path_factory.mktemp("conventions") / "service.log"
    env = {"INFLUENCER_STATS_ACCESS_LOG": "on"}
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
