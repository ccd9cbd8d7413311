"""Paths routed as sent, and what a refresh and a PUT take, on every server over a raw socket.

Before, all four servers decoded the path before routing it: ``GET /collections/pl%2Fstats``
answered the stats of ``pl``, ``POST /collections/pl%2Frefresh`` refreshed it, past a
proxy's rule on raw paths. starlette, asgi and aiohttp now route the path as received and
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
    """The default profile on each server, every refresh read (none refused as too soon after the
    import: what a refresh takes is the point here)."""
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
    """A new collection read from a (fake) playlist: refreshable."""
    name = "c-" + uuid.uuid4().hex[:12]
    assert httpx.put(f"{service.url}/collections/{name}", json={"playlist": "PLdemo3"}).status_code == 201
    return name


def test_an_encoded_slash_in_an_id_is_part_of_it_never_another_route(
    service: RunningService, collection: str, request: pytest.FixtureRequest
) -> None:
    stats = _send(service, b"GET", f"/collections/{collection}%2Fstats")
    refresh = _send(service, b"POST", f"/collections/{collection}%2Frefresh", JSON, body=b"{}")
    delete = _send(service, b"DELETE", f"/collections/x%2F..%2F{collection}")
    encoded_name = _send(service, b"GET", f"/collections/{collection}/%73tats")

    if not _raw_path(request):  # decoded before the app sees it: the documented exception (Granian)
        assert (stats.status, refresh.status, encoded_name.status) == (200, 200, 200)
        assert delete.problem()["type"] == "urn:influencer-stats:problem:route-not-found"
    else:
        assert stats.problem()["value"] == f"{collection}/stats"
        assert stats.status == 422
        assert refresh.problem()["type"] == "urn:influencer-stats:problem:method-not-allowed"
        assert (delete.status, delete.problem()["value"]) == (422, f"x/../{collection}")
        assert encoded_name.problem()["type"] == "urn:influencer-stats:problem:route-not-found"
    assert httpx.get(f"{service.url}/collections/{collection}").status_code == 200  # still there


def test_other_escapes_in_an_id_still_name_the_collection(service: RunningService) -> None:
    name = "c-" + uuid.uuid4().hex[:12]
    assert httpx.put(f"{service.url}/collections/{name}", json={"videos": VIDEOS}).status_code == 201

    answer = _send(service, b"GET", f"/collections/{name.replace('-', '%2D')}/stats")

    assert answer.status == 200


@pytest.mark.parametrize(
    ("headers", "body", "status"),
    [
        ((), b"", 415),
        ((b"Content-Type: application/x-www-form-urlencoded",), b"a=b", 415),
        ((b"Content-Type: text/plain",), b"{}", 415),
        ((b"Content-Type: multipart/form-data; boundary=x",), b"--x--\r\n", 415),
        ((JSON,), b"", 400),
        ((JSON,), b'{"playlist":"PLdemo9"}', 422),
        ((JSON,), b"{}", 200),
        ((b"Content-Type: application/json; charset=utf-8",), b" {} ", 200),
    ],
)
def test_a_refresh_takes_the_empty_object_sent_as_json_only(
    service: RunningService, collection: str, headers: tuple[bytes, ...], body: bytes, status: int
) -> None:
    answer = _send(service, b"POST", f"/collections/{collection}/refresh", *headers, body=body)

    assert answer.status == status, answer
    if status == 415:
        assert answer.problem()["type"] == "urn:influencer-stats:problem:unsupported-media-type"


def test_a_key_given_twice_is_refused_and_nothing_is_stored(service: RunningService) -> None:
    name = "c-" + uuid.uuid4().hex[:12]
    body = b'{"playlist":"PLdemo3","playlist":"PLdemo30"}'

    answer = _send(service, b"PUT", f"/collections/{name}", JSON, body=body)

    assert (answer.status, answer.problem()["field"]) == (422, "playlist")
    assert httpx.get(f"{service.url}/collections/{name}").status_code == 404
