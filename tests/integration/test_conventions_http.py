"""gzip on every server: real process, real socket (issue 34); CORS and the access log: their
slices' ``test_cors_http`` and ``test_access_log_http``.

What ``HttpApi`` decides is tested in process (``tests/unit/test_http_api_conventions.py``); here each server
must hand over ``Accept-Encoding`` and write the encoded body with its length and headers.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator

import httpx
import orjson
import pytest

from tests.integration.edge_support import MANY, big, client, raw, serving
from tests.support import SERVERS, RunningService

__all__ = ["client"]  # edge_support's fixture, which this module's tests take


@pytest.fixture(scope="module", params=SERVERS)
def service(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningService]:
    """The default profile on each server, answers of 1 KiB and more gzipped."""
    with serving(request, tmp_path_factory, {"INFLUENCER_STATS_GZIP_MIN_BYTES": "1024"}) as running:
        yield running


def test_a_large_answer_is_gzipped_when_accepted_and_says_vary(client: httpx.Client) -> None:
    path = big(client)

    zipped, sent = raw(client, "GET", path, {"accept-encoding": "gzip"})
    plain, identity = raw(client, "GET", path, {"accept-encoding": "identity"})

    assert zipped.status_code == plain.status_code == 200
    assert zipped.headers["content-encoding"] == "gzip"
    assert int(zipped.headers["content-length"]) == len(sent)
    assert orjson.loads(gzip.decompress(sent)) == {"videos": MANY}
    assert gzip.decompress(sent) == identity
    assert len(sent) < len(identity) / 2
    assert "content-encoding" not in plain.headers
    assert int(plain.headers["content-length"]) == len(identity)
    # CORS is on for this service: every answer varies by Origin too.
    assert zipped.headers["vary"].lower() == plain.headers["vary"].lower() == "accept-encoding"


def test_head_answers_the_identity_representation(client: httpx.Client) -> None:
    path = big(client)

    head = client.head(path, headers={"accept-encoding": "gzip"})

    assert head.status_code == 200
    assert "content-encoding" not in head.headers
    assert head.headers["vary"].lower() == "accept-encoding"
    assert head.content == b""


def test_the_openapi_document_is_served_gzipped(client: httpx.Client) -> None:
    response, sent = raw(client, "GET", "/openapi.json", {"accept-encoding": "br;q=1, gzip;q=0.5"})

    assert response.headers["content-encoding"] == "gzip"
    assert orjson.loads(gzip.decompress(sent))["openapi"] == "3.1.0"
    assert len(sent) < 20_000


def test_a_small_answer_is_left_alone(client: httpx.Client) -> None:
    response, sent = raw(client, "GET", "/healthz", {"accept-encoding": "gzip"})

    assert "content-encoding" not in response.headers
    assert orjson.loads(sent) == {"status": "ok"}
