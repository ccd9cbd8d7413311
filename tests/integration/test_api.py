"""Each server adapter speaks HTTP the same way: real process, real socket.

Parametrized over every server interpreter by the ``service`` fixture. What
``HttpApi`` decides (validation, status codes, problem bodies, write auth,
request ids, readiness, metrics) is tested in process by
``tests/unit/test_http_api_*.py``; here are the cases an adapter could get wrong:
routing and path parameters (decoding included), the framework's own 404 and
405, streaming a body in and refusing it at 1 MiB, HEAD, status codes without a
body, response headers and content types.
"""

from __future__ import annotations

import re
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx
import orjson
import pytest

from influencer_stats.domain.models import VideoId
from influencer_stats.interpreters.videos.synthetic import synthetic_stats
from tests.support import RunningService

ORIGINAL_ID = "99757a95-f758-499f-a170-bea93b2d8bcf"
ORIGINAL_VIDEOS = ["-4lB5EKS5Uk", "-jlLkTtgWUk", "1FEFpk-uIYo"]


def new_id() -> str:
    return "c-" + uuid.uuid4().hex


def assert_problem(response: httpx.Response, status: int) -> dict[str, object]:
    assert response.status_code == status
    assert response.headers["content-type"] == "application/problem+json"
    assert response.headers["x-request-id"]
    body: dict[str, object] = response.json()
    assert body["status"] == status
    assert {"type", "title", "detail"} <= body.keys()
    assert "Traceback" not in response.text
    return body


def expected_totals(videos: list[str]) -> dict[str, int]:
    stats = [synthetic_stats(VideoId(v)) for v in dict.fromkeys(videos) if not v.startswith("X")]
    engagements = sum(s.likes + s.comments + s.dislikes for s in stats)
    return {
        "impressions": sum(s.views for s in stats),
        "engagements": engagements,
        "score": engagements + sum(s.likes for s in stats),
    }


def test_the_original_readme_flow_gives_non_zero_stats(client: httpx.Client) -> None:
    put = client.put(f"/collections/{ORIGINAL_ID}", json={"videos": ORIGINAL_VIDEOS})
    stats = client.get(f"/collections/{ORIGINAL_ID}/stats")

    assert put.status_code in (200, 201)
    assert stats.status_code == 200
    assert stats.headers["content-type"] == "application/json"
    assert len(stats.headers["x-request-id"]) == 16
    body = stats.json()
    assert body == {**expected_totals(ORIGINAL_VIDEOS), "videos": 3, "missing": []}
    assert body["impressions"] > 0 and body["engagements"] > 0 and body["score"] > body["engagements"]


def test_put_creates_with_a_location_then_replaces_and_get_returns_the_videos(client: httpx.Client) -> None:
    cid = new_id()

    created = client.put(f"/collections/{cid}", json={"videos": ORIGINAL_VIDEOS})
    replaced = client.put(f"/collections/{cid}", json={"videos": ORIGINAL_VIDEOS[:1]})

    assert created.status_code == 201
    assert created.headers["location"] == f"/collections/{cid}"
    assert replaced.status_code == 200
    assert "location" not in replaced.headers
    assert client.get(f"/collections/{cid}").json() == {"videos": ORIGINAL_VIDEOS[:1]}


def test_delete_answers_204_without_a_body_and_then_everything_is_404(client: httpx.Client) -> None:
    cid = new_id()
    client.put(f"/collections/{cid}", json={"videos": ORIGINAL_VIDEOS})

    deleted = client.delete(f"/collections/{cid}")

    assert (deleted.status_code, deleted.content) == (204, b"")
    assert deleted.headers["x-request-id"]
    assert_problem(client.get(f"/collections/{cid}"), 404)
    assert_problem(client.get(f"/collections/{cid}/stats"), 404)
    assert_problem(client.delete(f"/collections/{cid}"), 404)


def test_the_routes_without_a_parameter_answer_with_their_content_types(client: httpx.Client) -> None:
    cid = new_id()
    client.put(f"/collections/{cid}", json={"videos": []})

    health = client.get("/healthz")
    listed = client.get("/collections")
    metrics = client.get("/metrics")
    document = client.get("/openapi.json")

    assert (health.status_code, health.json()) == (200, {"status": "ok"})
    assert listed.headers["content-type"] == "application/json" and cid in listed.json()["ids"]
    assert metrics.headers["content-type"].startswith("text/plain")
    assert document.json()["openapi"] == "3.1.0"


def test_an_unknown_route_is_a_404_problem_carrying_the_request_id(client: httpx.Client) -> None:
    response = client.get("/no/such/route", headers={"x-request-id": "abc"})

    body = assert_problem(response, 404)
    assert body["type"] == "urn:influencer-stats:problem:route-not-found"
    assert response.headers["x-request-id"] == "abc"


@pytest.mark.parametrize("method", ["POST", "PATCH", "PROPFIND"])
def test_a_wrong_method_is_a_405_problem_with_allow(client: httpx.Client, method: str) -> None:
    response = client.request(method, f"/collections/{new_id()}", json={"videos": []})

    assert_problem(response, 405)
    assert response.headers["allow"] == "DELETE, GET, HEAD, PUT"


@pytest.mark.parametrize(("raw", "decoded"), [("bad%20id", "bad id"), ("semi;colon", "semi;colon")])
def test_the_collection_id_reaches_validation_decoded_and_whole(
    client: httpx.Client, raw: str, decoded: str
) -> None:
    put = assert_problem(client.put(f"/collections/{raw}", json={"videos": []}), 422)
    stats = assert_problem(client.get(f"/collections/{raw}/stats"), 422)

    assert (put["field"], put["value"]) == ("id", decoded)
    assert (stats["field"], stats["value"]) == ("id", decoded)


def test_a_body_declared_over_one_mebibyte_is_a_413_problem(client: httpx.Client) -> None:
    response = client.put(f"/collections/{new_id()}", content=b" " * (1024 * 1024 + 1))

    assert_problem(response, 413)


def test_a_large_chunked_body_is_refused_without_a_content_length(client: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(40):
            yield b" " * 65_536

    response = client.put(f"/collections/{new_id()}", content=chunks())

    assert_problem(response, 413)


def test_a_chunked_body_under_the_limit_is_read_whole(client: httpx.Client) -> None:
    cid = new_id()
    data = orjson.dumps({"videos": ORIGINAL_VIDEOS}) + b" " * 200_000  # whitespace is still JSON

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(data), 7_000):
            yield data[start : start + 7_000]

    response = client.put(f"/collections/{cid}", content=chunks())

    assert response.status_code == 201
    assert client.get(f"/collections/{cid}").json() == {"videos": ORIGINAL_VIDEOS}


def test_a_large_body_is_read_whole_before_it_is_judged(client: httpx.Client) -> None:
    cid = new_id()

    problem = assert_problem(client.put(f"/collections/{cid}", json={"videos": ["-4lB5EKS5Uk"] * 5_001}), 422)

    assert (problem["field"], problem["value"]) == ("videos", 5_001)
    assert_problem(client.get(f"/collections/{cid}"), 404)  # nothing was written


def test_head_answers_with_the_status_and_headers_of_get_and_no_body(client: httpx.Client) -> None:
    cid = new_id()
    client.put(f"/collections/{cid}", json={"videos": ORIGINAL_VIDEOS})

    for path in ("/healthz", f"/collections/{cid}/stats", "/collections/never-saved/stats"):
        get, head = client.get(path), client.head(path)

        assert head.status_code == get.status_code
        assert head.content == b""
        assert head.headers["content-type"] == get.headers["content-type"]
        assert head.headers["x-request-id"]


# --- the same answer on every server, to requests only a raw socket sends ----------------------


@dataclass(frozen=True)
class RawAnswer:
    status: int
    headers: dict[str, str]  # names lower-cased; a repeated name keeps its last value
    body: bytes

    def problem(self) -> dict[str, object]:
        assert self.headers["content-type"] == "application/problem+json", self
        assert self.headers["x-request-id"], self
        document: dict[str, object] = orjson.loads(self.body)
        assert document["status"] == self.status
        return document


def address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def raw_request(url: str, request: bytes, timeout: float = 5.0) -> RawAnswer:
    """Send ``request`` as it is (it must ask for ``Connection: close``); read until the server closes."""
    with socket.create_connection(address(url), timeout=timeout) as sock:
        sock.sendall(request)
        received = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            chunk = sock.recv(65_536)
            if not chunk:
                break
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {
        name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)
    }
    return RawAnswer(int(status_line.split(" ")[1]), headers, body)


def request_bytes(
    method: bytes, target: bytes, *extra: bytes, body: bytes = b"", host: bytes = b"127.0.0.1"
) -> bytes:
    lines = [method + b" " + target + b" HTTP/1.1", b"Host: " + host, b"Connection: close", *extra]
    if body:
        lines.append(b"Content-Length: " + str(len(body)).encode())
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


DEEP_JSON = b"[" * 1000 + b"]" * 1000

#: (request, status, problem type or None where a server's own parser may answer first).
#: uvicorn's and aiohttp's C parsers (llhttp) refuse a method they do not know and raw bytes
#: outside ASCII in the target with a text/plain 400 before any app code runs (aiohttp's
#: quotes the request line); Granian passes both through and the edge answers the same 400.
SAME_ANSWER: dict[str, tuple[bytes, int, str | None]] = {
    "trailing-slash": (
        request_bytes(b"GET", b"/collections/", host=b"evil.example"),
        404,
        "route-not-found",
    ),
    "trailing-slash-healthz": (request_bytes(b"GET", b"/healthz/"), 404, "route-not-found"),
    "encoded-slash-in-stats-id": (request_bytes(b"GET", b"/collections/a%2Fb/stats"), 404, "route-not-found"),
    "encoded-slash-in-put-id": (
        request_bytes(b"PUT", b"/collections/a%2Fb", body=b'{"videos": []}'),
        404,
        "route-not-found",
    ),
    "encoded-braces": (request_bytes(b"GET", b"/collections/%7Bx%7D"), 422, "validation-error"),
    "encoded-non-ascii": (request_bytes(b"GET", b"/collections/%C3%A9"), 400, "invalid-path"),
    "encoded-invalid-utf8": (request_bytes(b"GET", b"/collections/%FF/stats"), 400, "invalid-path"),
    "encoded-non-ascii-unmatched": (request_bytes(b"GET", b"/%C3%A9"), 400, "invalid-path"),
    "raw-non-ascii": (request_bytes(b"GET", "/collections/é".encode()), 400, None),
    "unknown-method": (request_bytes(b"M0", b"/healthz"), 400, None),
    "unknown-method-on-an-id": (request_bytes(b"M1999", b"/collections/c"), 400, None),
    "unknown-method-unmatched": (request_bytes(b"M7", b"/no/such/route"), 400, None),
    "lower-case-method": (request_bytes(b"get", b"/healthz"), 400, None),
    # The asterisk-form is for OPTIONS only (RFC 9112 3.2.4): aiohttp's parser refuses `GET *`
    # itself; uvicorn and Granian pass it on, and the edge answers the same 400 (it was a 404).
    "asterisk-get": (request_bytes(b"GET", b"*"), 400, None),
    "asterisk-delete": (request_bytes(b"DELETE", b"*"), 400, None),
    "asterisk-options": (request_bytes(b"OPTIONS", b"*"), 404, "route-not-found"),
    "webdav-method": (request_bytes(b"PROPFIND", b"/healthz"), 405, "method-not-allowed"),
    "connect": (request_bytes(b"CONNECT", b"/collections/c"), 405, "method-not-allowed"),
    "json-1000-deep": (request_bytes(b"PUT", b"/collections/deep", body=DEEP_JSON), 400, "malformed-json"),
    "json-1000-deep-objects": (
        request_bytes(b"PUT", b"/collections/deep", body=b'{"a":' * 1000 + b"1" + b"}" * 1000),
        400,
        "malformed-json",
    ),
}


@pytest.mark.parametrize("case", SAME_ANSWER)
def test_every_server_gives_the_same_answer(service: RunningService, case: str) -> None:
    request, status, slug = SAME_ANSWER[case]

    answer = raw_request(service.url, request)

    assert answer.status == status, answer
    assert "location" not in answer.headers
    assert b"evil.example" not in answer.body
    if slug is not None or answer.headers.get("content-type") == "application/problem+json":
        problem = answer.problem()
        assert slug is None or problem["type"] == f"urn:influencer-stats:problem:{slug}"
    if status == 405:
        allow = "GET, HEAD" if b"/healthz" in request else "DELETE, GET, HEAD, PUT"
        assert answer.headers["allow"] == allow
    assert httpx.get(f"{service.url}/collections/deep").status_code == 404  # nothing stored


#: Requests whose answers come from every layer: the app (200, 404, 405, 422, problems) and the
#: servers' own parsers (a control character in a header, an unknown method, ``GET *``).
ANSWERED_BY_EVERY_LAYER = [
    request_bytes(b"GET", b"/healthz"),
    request_bytes(b"GET", b"/no/such/route"),
    request_bytes(b"GET", b"/healthz", b"X-Bad: a\x01b"),
    request_bytes(b"GET", b"*"),
    *(request for request, _, _ in SAME_ANSWER.values()),
]


def test_no_answer_names_a_server_version(service: RunningService) -> None:
    # aiohttp sent "Server: Python/3.11 aiohttp/3.14.5" on every answer, its parser's 400s included.
    servers = {raw_request(service.url, request).headers.get("server") for request in ANSWERED_BY_EVERY_LAYER}

    assert servers <= {None, "aiohttp", "granian"}, servers  # at most a bare name, never a version


def test_content_length_with_transfer_encoding_never_lets_a_second_request_through(
    service: RunningService,
) -> None:
    # uvicorn's and aiohttp's parsers refuse the pair (400). Granian (hyper) drops the
    # Content-Length before the adapter sees the headers, reads the body as chunked and closes
    # the connection after answering, as RFC 9112 6.3 allows: whatever follows is never read.
    cid, smuggled = new_id(), new_id()
    body = b'{"videos":[]}'
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    second = request_bytes(b"PUT", f"/collections/{smuggled}".encode(), body=body)
    first = (
        f"PUT /collections/{cid} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Length: {len(chunked)}\r\nTransfer-Encoding: chunked\r\n\r\n"
    ).encode()

    answer = raw_request(service.url, first + chunked + second)

    assert answer.status in (400, 201), answer
    assert answer.status == 400 or answer.headers["connection"] == "close", answer
    assert b"HTTP/1.1" not in answer.body  # one answer only
    assert httpx.get(f"{service.url}/collections/{smuggled}").status_code == 404


# --- an upload cut short by the client ------------------------------------------------------------


def count(service: RunningService, method: str, status: str) -> float:
    """``influencer_stats_http_requests_total`` of the collection route for ``method``/``status``."""
    text = httpx.get(f"{service.url}/metrics").text
    pattern = r"influencer_stats_http_requests_total\{(.*)\} (\S+)"
    total = 0.0
    for labels, value in re.findall(pattern, text):
        if {'method="' + method + '"', 'route="/collections/{id}"', 'status="' + status + '"'} <= set(
            labels.split(",")
        ):
            total += float(value)
    return total


def send_and_vanish(url: str, data: bytes) -> None:
    """Send ``data`` and close the connection at once, never reading an answer."""
    with socket.create_connection(address(url), timeout=5) as sock:
        sock.sendall(data)


def wait_for(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the server never got there"
        time.sleep(0.05)


PREFIX = b'{"videos":["-4lB5EKS5Uk"]}'  # 26 bytes that are valid JSON on their own


def test_an_upload_cut_short_of_its_content_length_is_never_stored_nor_a_server_error(
    service: RunningService,
) -> None:
    cid = new_id()
    refused, errors = count(service, "PUT", "400"), count(service, "PUT", "500")

    send_and_vanish(
        service.url,
        f"PUT /collections/{cid} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 200\r\n\r\n".encode()
        + PREFIX,
    )

    wait_for(lambda: count(service, "PUT", "400") > refused)
    assert httpx.get(f"{service.url}/collections/{cid}").status_code == 404
    assert count(service, "PUT", "500") == errors
    assert "http.unhandled_error" not in service.output()


@pytest.mark.parametrize(
    "cut",
    [
        b"%x\r\n%s\r\n" % (len(PREFIX), PREFIX),  # after a whole chunk, before the last (0) one
        b"%x\r\n%s" % (len(PREFIX) + 10, PREFIX),  # inside a chunk
        b"%x\r\n%s\r\n0\r\n" % (len(PREFIX), PREFIX),  # inside the last chunk
    ],
    ids=["before-the-last-chunk", "inside-a-chunk", "inside-the-last-chunk"],
)
def test_a_chunked_upload_cut_short_is_never_stored_nor_a_server_error(
    service: RunningService, cut: bytes
) -> None:
    # Granian stored a prefix that was valid JSON: its body iterator ended as if whole. It does
    # signal the cut (an empty chunk before the end's), and the RSGI adapter now reads it.
    cid = new_id()
    refused, errors = count(service, "PUT", "400"), count(service, "PUT", "500")
    head = f"PUT /collections/{cid} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"

    send_and_vanish(service.url, head.encode() + cut)

    wait_for(lambda: count(service, "PUT", "400") > refused)
    assert httpx.get(f"{service.url}/collections/{cid}").status_code == 404
    assert count(service, "PUT", "500") == errors
    assert "http.unhandled_error" not in service.output()


def test_a_whole_chunked_upload_is_stored_though_the_client_leaves_before_the_answer(
    service: RunningService,
) -> None:
    cid = new_id()
    head = f"PUT /collections/{cid} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunks = b"%x\r\n%s\r\n" % (10, PREFIX[:10]) + b"%x\r\n%s\r\n0\r\n\r\n" % (16, PREFIX[10:])

    send_and_vanish(service.url, head.encode() + chunks)

    wait_for(lambda: httpx.get(f"{service.url}/collections/{cid}").status_code == 200)
    assert httpx.get(f"{service.url}/collections/{cid}").json() == {"videos": ["-4lB5EKS5Uk"]}
