"""Write auth, request ids, secret redaction and the OpenAPI document, over real sockets."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from influencer_stats.bootstrap.edge import ROUTES
from influencer_stats.http.routes import DOCS_ROUTES
from perf.service import pooled
from tests.raw_http import raw_request, request_bytes
from tests.support import (
    ONE_CLIENT_PER_LIBRARY,
    SERVERS,
    RunningService,
    profile_args,
    running_double_process,
    running_service,
)

TOKEN = "write-token-0123456789abcdef"
MAX_VIDEOS = 7  # the operator's limit (INFLUENCER_STATS_MAX_VIDEOS), not the default 5,000
VIDEOS = ["-4lB5EKS5Uk", "-jlLkTtgWUk", "1FEFpk-uIYo"]


@pytest.fixture(scope="module", params=SERVERS)
def guarded(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningService]:
    """A service with a write token and the log-everything logger."""
    log = tmp_path_factory.mktemp("guarded") / "service.log"
    env = {"INFLUENCER_STATS_WRITE_TOKEN": TOKEN, "INFLUENCER_STATS_MAX_VIDEOS": str(MAX_VIDEOS)}
    with running_service(["--server", request.param, "--logger", "all"], log, env=env) as service:
        yield service


def test_writes_without_the_token_are_401_with_www_authenticate(guarded: RunningService) -> None:
    for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": TOKEN}):
        put = httpx.put(f"{guarded.url}/collections/locked", json={"videos": []}, headers=headers)
        delete = httpx.delete(f"{guarded.url}/collections/locked", headers=headers)

        for response in (put, delete):
            assert response.status_code == 401
            assert response.headers["www-authenticate"] == 'Bearer realm="influencer-stats"'
            assert response.headers["content-type"] == "application/problem+json"
    assert httpx.get(f"{guarded.url}/collections/locked").status_code == 404  # nothing was written


def test_writes_with_the_token_succeed_and_reads_need_none(guarded: RunningService) -> None:
    auth = {"authorization": f"Bearer {TOKEN}"}

    put = httpx.put(f"{guarded.url}/collections/open", json={"videos": VIDEOS}, headers=auth)
    read = httpx.get(f"{guarded.url}/collections/open/stats")
    delete = httpx.delete(f"{guarded.url}/collections/open", headers=auth)

    assert (put.status_code, read.status_code, delete.status_code) == (201, 200, 204)


def test_a_valid_request_id_is_echoed_and_bound_to_every_log_line_of_the_request(
    guarded: RunningService,
) -> None:
    request_id = "req-" + uuid.uuid4().hex
    auth = {"authorization": f"Bearer {TOKEN}", "x-request-id": request_id}

    response = httpx.put(f"{guarded.url}/collections/traced", json={"videos": VIDEOS}, headers=auth)

    assert response.headers["x-request-id"] == request_id
    lines = [orjson.loads(line) for line in guarded.output().splitlines() if request_id in line]
    assert [line["event"] for line in lines] == ["collection.saved"]


def test_a_missing_or_invalid_request_id_is_replaced_by_a_new_one(guarded: RunningService) -> None:
    plain = httpx.get(f"{guarded.url}/healthz")
    hostile = httpx.get(f"{guarded.url}/healthz", headers={"x-request-id": "x" * 500})
    not_found = httpx.get(f"{guarded.url}/no/such/route", headers={"x-request-id": "abc"})

    assert len(plain.headers["x-request-id"]) == 16
    assert hostile.headers["x-request-id"] != "x" * 500
    assert not_found.status_code == 404
    assert not_found.headers["x-request-id"] == "abc"


def test_the_write_token_never_appears_in_a_log_line(guarded: RunningService) -> None:
    httpx.put(
        f"{guarded.url}/collections/t", json={"videos": []}, headers={"authorization": f"Bearer {TOKEN}"}
    )
    httpx.put(f"{guarded.url}/collections/t", json={"videos": []}, headers={"authorization": TOKEN})

    assert guarded.output()  # the logger writes every event
    assert TOKEN not in guarded.output()


STOLEN = "stolen-token-5e1f"


@pytest.mark.parametrize(
    "header",
    [
        f"Bearer {STOLEN}\xff".encode("latin-1"),  # not UTF-8: aiohttp's 500 that logged it
        f"Bearer {TOKEN}\xff".encode("latin-1"),  # the right token, then a stray byte
        f"Bearer {STOLEN}\x01".encode(),  # a control character: the parsers' own 400
        STOLEN.encode() + b"\xc3\xa9",  # UTF-8 outside ASCII, no scheme
    ],
    ids=["invalid-utf8", "token-then-invalid-utf8", "control-character", "non-ascii"],
)
def test_a_credential_a_server_cannot_decode_is_refused_and_never_logged(
    guarded: RunningService, header: bytes
) -> None:
    cid = "c-" + uuid.uuid4().hex
    answer = raw_request(
        guarded.url, request_bytes(b"DELETE", f"/collections/{cid}".encode(), b"Authorization: " + header)
    )

    assert answer.status in (400, 401)  # 400: a parser refused the header line before our code ran
    if answer.status == 401:
        answer.problem()
        assert answer.headers["www-authenticate"] == 'Bearer realm="influencer-stats"'
    assert httpx.get(f"{guarded.url}/healthz").status_code == 200
    assert STOLEN not in guarded.output()
    assert "http.unhandled_error" not in guarded.output()


@pytest.mark.parametrize(
    "lines",
    [
        (f"Bearer {TOKEN}", f"Bearer {TOKEN}"),
        ("Bearer wrong", f"Bearer {TOKEN}"),  # the ASGI server used to take the last
        (f"Bearer {TOKEN}", "Bearer wrong"),  # the others, the first
    ],
)
def test_two_authorization_lines_never_authorize_a_write(
    guarded: RunningService, lines: tuple[str, str]
) -> None:
    cid = "c-" + uuid.uuid4().hex
    headers = [("authorization", line) for line in lines]

    put = httpx.put(f"{guarded.url}/collections/{cid}", json={"videos": VIDEOS}, headers=headers)

    assert put.status_code == 401
    assert put.headers["content-type"] == "application/problem+json"
    assert httpx.get(f"{guarded.url}/collections/{cid}").status_code == 404


def test_the_openapi_document_describes_every_route(guarded: RunningService) -> None:
    document = httpx.get(f"{guarded.url}/openapi.json").json()

    assert document["openapi"] == "3.1.0"
    assert set(document["paths"]) == set(ROUTES) - DOCS_ROUTES  # the docs page is for people
    for path in document["paths"]:
        # HEAD is answered wherever GET is; the document says so once, not as a twin of every GET.
        documented = set(ROUTES[path].methods) - {"HEAD"}
        assert {m.upper() for m in document["paths"][path] if m != "parameters"} == documented


def test_the_operators_video_limit_is_enforced_and_documented(guarded: RunningService) -> None:
    auth = {"authorization": f"Bearer {TOKEN}"}
    ids = [f"{n:011d}" for n in range(MAX_VIDEOS + 1)]

    at_limit = httpx.put(f"{guarded.url}/collections/limit", json={"videos": ids[:-1]}, headers=auth)
    over = httpx.put(f"{guarded.url}/collections/limit", json={"videos": ids}, headers=auth)
    document = httpx.get(f"{guarded.url}/openapi.json").json()

    assert at_limit.status_code in (200, 201)
    assert over.status_code == 422
    assert (over.json()["field"], over.json()["value"]) == ("videos", MAX_VIDEOS + 1)
    assert httpx.get(f"{guarded.url}/collections/limit").json() == {"videos": ids[:-1]}  # kept
    videos = document["components"]["schemas"]["Videos"]["properties"]["videos"]
    assert videos["maxItems"] == MAX_VIDEOS


@pytest.mark.parametrize("client", ONE_CLIENT_PER_LIBRARY)
def test_the_api_key_reaches_youtube_but_no_log_line(tmp_path: Path, client: str) -> None:
    key = "AIzaSy-test-key-4f1c2d3e"
    with (
        running_double_process(tmp_path / "double.log") as double_url,
        running_service(
            ["--profile", "v1", "--video-client", client],  # v1 logs every event
            tmp_path / "v1.log",
            env={"YOUTUBE_API_URL": double_url, "YOUTUBE_API_KEY": key},
        ) as service,
    ):
        httpx.put(f"{service.url}/collections/k", json={"videos": VIDEOS})
        assert httpx.get(f"{service.url}/collections/k/stats").status_code == 200
        stats = httpx.get(double_url.replace("/youtube/v3/videos", "/_control/stats")).json()

    assert stats["key_header_seen"] is True
    assert stats["key_in_query_seen"] is False
    assert "stats.computed" in service.output()
    assert key not in service.output()


def test_1000_concurrent_writers_and_readers_on_one_collection_see_only_written_values(
    tmp_path: Path,
) -> None:
    values = [[f"{n:011d}", f"{n + 1:011d}"][: 1 + n % 2] for n in range(50)]  # 1 or 2 distinct videos
    last = ["00000000001", "00000000002", "00000000003"]  # 3: never written before

    async def hammer(url: str) -> tuple[list[int], list[int]]:
        limits = pooled(100)
        async with httpx.AsyncClient(base_url=url, limits=limits, timeout=30) as client:
            await client.put("/collections/hot", json={"videos": values[0]})

            async def write(n: int) -> None:
                response = await client.put("/collections/hot", json={"videos": values[n % len(values)]})
                assert response.status_code in (200, 201)

            async def read() -> int:
                response = await client.get("/collections/hot/stats")
                assert response.status_code == 200
                return int(response.json()["videos"])

            results = await asyncio.gather(*(write(n) if n % 2 else read() for n in range(1000)))
            await client.put("/collections/hot", json={"videos": last})
            after = await asyncio.gather(*(read() for _ in range(50)))
            return [r for r in results if isinstance(r, int)], list(after)

    with running_service([*profile_args("fast"), "--video-client", "fake"], tmp_path / "hot.log") as service:
        reads, after = asyncio.run(hammer(service.url))

    assert len(reads) == 500
    assert set(reads) <= {1, 2}  # every read is a value some writer wrote
    assert after == [3] * 50  # after the last write, every read returns it
