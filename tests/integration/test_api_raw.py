"""Each server adapter answers what only a raw socket sends the same way, and keeps nothing of
an upload the client cut short: real process, real socket, every server (the ``service`` fixture).
The routes themselves: test_api.py.
"""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Callable

import httpx
import pytest

from tests.raw_http import address, raw_request, request_bytes
from tests.support import RunningService

# --- the same answer on every server, to requests only a raw socket sends ----------------------


def _new_id() -> str:
    return "c-" + uuid.uuid4().hex


DEEP_JSON = b"[" * 1000 + b"]" * 1000

#: (request, status, problem type or None where a server's own parser may answer first). An
#: encoded slash, which Granian decodes before the app sees the path: test_raw_paths.py.
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


def test_no_answer_names_a_server_version(service: RunningService, request: pytest.FixtureRequest) -> None:
    # aiohttp sent "Server: Python/3.11 aiohttp/3.14.5" on every answer, its parser's 400s included.
    servers = {raw_request(service.url, sent).headers.get("server") for sent in ANSWERED_BY_EVERY_LAYER}

    # At most the bare name of the server under test (aiohttp's, Granian's), never a version.
    assert servers <= {None, request.node.callspec.params["service"]}, servers


def test_content_length_with_transfer_encoding_never_lets_a_second_request_through(
    service: RunningService,
) -> None:
    # uvicorn's and aiohttp's parsers refuse the pair (400). Granian (hyper) drops the
    # Content-Length before the adapter sees the headers, reads the body as chunked and closes
    # the connection after answering, as RFC 9112 6.3 allows: whatever follows is never read.
    cid, smuggled = _new_id(), _new_id()
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


def refusals(service: RunningService) -> int:
    """Uploads the service refused as cut short so far: its ``http.body_incomplete`` events (its
    log, the default level; no metrics needed, so the core alone runs this too)."""
    return service.output().count("http.body_incomplete")


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
    cid = _new_id()
    refused = refusals(service)

    send_and_vanish(
        service.url,
        f"PUT /collections/{cid} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 200\r\n\r\n".encode()
        + PREFIX,
    )

    wait_for(lambda: refusals(service) > refused)
    assert httpx.get(f"{service.url}/collections/{cid}").status_code == 404
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
    cid = _new_id()
    refused = refusals(service)
    head = f"PUT /collections/{cid} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"

    send_and_vanish(service.url, head.encode() + cut)

    wait_for(lambda: refusals(service) > refused)
    assert httpx.get(f"{service.url}/collections/{cid}").status_code == 404
    assert "http.unhandled_error" not in service.output()


def test_a_whole_chunked_upload_is_stored_though_the_client_leaves_before_the_answer(
    service: RunningService,
) -> None:
    cid = _new_id()
    head = f"PUT /collections/{cid} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunks = b"%x\r\n%s\r\n" % (10, PREFIX[:10]) + b"%x\r\n%s\r\n0\r\n\r\n" % (16, PREFIX[10:])

    send_and_vanish(service.url, head.encode() + chunks)

    wait_for(lambda: httpx.get(f"{service.url}/collections/{cid}").status_code == 200)
    assert httpx.get(f"{service.url}/collections/{cid}").json() == {"videos": ["-4lB5EKS5Uk"]}
