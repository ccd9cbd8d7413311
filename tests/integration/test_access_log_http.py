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

from tests.integration.edge_support import client, serving
from tests.support import SERVERS, RunningService, wait_for

__all__ = ["client"]  # edge_support's fixture, which this module's tests take


@pytest.fixture(scope="module", params=SERVERS)
def service(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningService]:
    """The default profile on each server, with the access log on."""
    with serving(request, tmp_path_factory, {"INFLUENCER_STATS_ACCESS_LOG": "on"}) as running:
        yield running


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
