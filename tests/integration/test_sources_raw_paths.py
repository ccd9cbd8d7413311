"""What a refresh and a PUT naming a source take, on every server over a raw socket, and an
encoded slash before ``refresh`` that is never the refresh route (where the server routes the
path as received). The servers: test_raw_paths.py's fixture.
"""

from __future__ import annotations

import uuid

import httpx
import pytest

from influencer_stats.servers import server as server_named
from tests.integration.test_raw_paths import JSON, _send, service
from tests.support import RunningService

__all__ = ["service"]  # the fixture this module's tests take


@pytest.fixture
def collection(service: RunningService) -> str:
    """A new collection read from a (fake) playlist: refreshable."""
    name = "c-" + uuid.uuid4().hex[:12]
    assert httpx.put(f"{service.url}/collections/{name}", json={"playlist": "PLdemo3"}).status_code == 201
    return name


def test_an_encoded_slash_before_refresh_is_part_of_the_id(
    service: RunningService, collection: str, request: pytest.FixtureRequest
) -> None:
    refresh = _send(service, b"POST", f"/collections/{collection}%2Frefresh", JSON, body=b"{}")

    if not server_named(request.node.callspec.params["service"]).raw_path:  # Granian: decoded first
        assert refresh.status == 200
    else:
        assert refresh.problem()["type"] == "urn:influencer-stats:problem:method-not-allowed"


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


def test_a_source_key_given_twice_is_refused_and_nothing_is_stored(service: RunningService) -> None:
    name = "c-" + uuid.uuid4().hex[:12]
    body = b'{"playlist":"PLdemo3","playlist":"PLdemo30"}'

    answer = _send(service, b"PUT", f"/collections/{name}", JSON, body=body)

    assert (answer.status, answer.problem()["field"]) == (422, "playlist")
    assert httpx.get(f"{service.url}/collections/{name}").status_code == 404
