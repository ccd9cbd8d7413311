"""Paths routed as sent, and what a PUT takes, on every server over a raw socket (what a refresh
takes: test_sources_raw_paths.py).

Before, all four servers decoded the path before routing it: ``GET /collections/pl%2Fstats``
answered the stats of ``pl``, past a proxy's rule on raw paths. starlette, asgi and aiohttp now route the path as received and
decode the id alone (``pl/stats``: a 422). Granian's RSGI scope holds only the decoded path,
so there ``%2F`` is still a ``/``: pinned here as documented (docs/api.md, "Rules"), so a
Granian that hands over the raw path shows up. In-process: tests/unit/test_http_api_raw_paths.py.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from influencer_stats.servers import server as server_named
from tests.raw_http import RawAnswer, raw_request, request_bytes
from tests.support import SERVERS, RunningService, running_service

JSON = b"Content-Type: application/json"
VIDEOS = ["-4lB5EKS5Uk", "-jlLkTtgWUk"]


@pytest.fixture(scope="module", params=SERVERS)
def service(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningService]:
    """The default profile on each server (every refresh read, when there are refreshes: none
    refused as too soon after the import, what a refresh takes being the point there)."""
    log = tmp_path_factory.mktemp("service") / "service.log"
    env = {"INFLUENCER_STATS_REFRESH_MIN_INTERVAL": "0"}
    with running_service(["--server", request.param], log, env=env) as running:
        yield running


def _raw_path(request: pytest.FixtureRequest) -> bool:
    """Whether the server under test hands the app the path as received (``Server.raw_path``)."""
    return server_named(request.node.callspec.params["service"]).raw_path


def _send(service: RunningService, method: bytes, target: str, *extra: bytes, body: bytes = b"") -> RawAnswer:
    return raw_request(service.url, request_bytes(method, target.encode(), *extra, body=body))


@pytest.fixture
def collection(service: RunningService) -> str:
    """A new collection."""
    name = "c-" + uuid.uuid4().hex[:12]
    assert httpx.put(f"{service.url}/collections/{name}", json={"videos": VIDEOS}).status_code == 201
    return name


def test_an_encoded_slash_in_an_id_is_part_of_it_never_another_route(
    service: RunningService, collection: str, request: pytest.FixtureRequest
) -> None:
    stats = _send(service, b"GET", f"/collections/{collection}%2Fstats")
    delete = _send(service, b"DELETE", f"/collections/x%2F..%2F{collection}")
    encoded_name = _send(service, b"GET", f"/collections/{collection}/%73tats")

    if not _raw_path(request):  # decoded before the app sees it: the documented exception (Granian)
        assert (stats.status, encoded_name.status) == (200, 200)
        assert delete.problem()["type"] == "urn:influencer-stats:problem:route-not-found"
    else:
        assert stats.problem()["value"] == f"{collection}/stats"
        assert stats.status == 422
        assert (delete.status, delete.problem()["value"]) == (422, f"x/../{collection}")
        assert encoded_name.problem()["type"] == "urn:influencer-stats:problem:route-not-found"
    assert httpx.get(f"{service.url}/collections/{collection}").status_code == 200  # still there


def test_other_escapes_in_an_id_still_name_the_collection(service: RunningService) -> None:
    name = "c-" + uuid.uuid4().hex[:12]
    assert httpx.put(f"{service.url}/collections/{name}", json={"videos": VIDEOS}).status_code == 201

    answer = _send(service, b"GET", f"/collections/{name.replace('-', '%2D')}/stats")

    assert answer.status == 200


def test_a_key_given_twice_is_refused_and_nothing_is_stored(service: RunningService) -> None:
    name = "c-" + uuid.uuid4().hex[:12]
    body = b'{"videos":["-4lB5EKS5Uk"],"videos":["-jlLkTtgWUk"]}'

    answer = _send(service, b"PUT", f"/collections/{name}", JSON, body=body)

    assert (answer.status, answer.problem()["field"]) == (422, "videos")
    assert httpx.get(f"{service.url}/collections/{name}").status_code == 404
