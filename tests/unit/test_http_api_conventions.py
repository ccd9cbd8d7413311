"""gzip, through ``HttpApi`` as a server calls it (issue 34); CORS and the access log, their slices':
``test_http_api_cors``, ``test_http_api_access_log``.

``tests/integration/test_conventions_http.py`` proves each server hands the headers over and
writes what these decide.
"""

from __future__ import annotations

import gzip

import pytest

from influencer_stats.bootstrap.edge import ROUTES
from influencer_stats.http.encoding import Gzip, accepts_gzip, with_vary
from influencer_stats.http.problems import Reply
from tests.unit.http_api_support import MANY, call, header, put_big, service

APP = "https://app.example.com"


# --- Accept-Encoding -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        ("gzip", True),
        ("gzip, deflate, br, zstd", True),
        ("GZIP;Q=0.5", True),
        ("x-gzip", True),
        ("br;q=1, gzip;q=0.001", True),
        ("*", True),
        ("identity;q=0, *;q=0.1", True),
        ("gzip;q=0, *", False),  # named wins over *
        ("gzip;q=0", False),
        ("*;q=0", False),
        ("identity", False),
        ("br, deflate", False),
        ("identity;q=0", False),  # refuses identity, accepts nothing else: identity is sent anyway
        ("", False),
        ("gzip;q=nan", False),
        ("gzip;q=2", False),
        ("gzip;q=x", False),
        ("gzip ; q=0.2 ; foo=bar", True),
    ],
)
def test_accept_encoding_is_read_with_its_q_values(value: str, accepted: bool) -> None:
    assert accepts_gzip(value) is accepted


def test_vary_is_merged_into_the_one_header() -> None:
    assert with_vary((("a", "1"),), "origin") == (("a", "1"), ("vary", "origin"))
    assert with_vary((("vary", "accept-encoding"), ("b", "2")), "origin") == (
        ("vary", "accept-encoding, origin"),
        ("b", "2"),
    )


# --- gzip ----------------------------------------------------------------------------------------


async def test_a_large_answer_is_gzipped_for_a_client_that_accepts_it() -> None:
    svc = service(gzip_min_bytes=1024)
    path = await put_big(svc)
    plain = await call(svc, "GET", path)

    zipped = await call(svc, "GET", path, accept_encoding="gzip, deflate, br")

    assert len(plain.body) > 1024
    assert header(zipped, "content-encoding") == "gzip"
    assert header(zipped, "vary") == "accept-encoding"
    assert gzip.decompress(zipped.body) == plain.body
    assert len(zipped.body) < len(plain.body) / 2
    assert header(zipped, "x-request-id")
    assert (zipped.status, zipped.content_type) == (plain.status, plain.content_type)


@pytest.mark.parametrize("accept_encoding", ["gzip", None])
async def test_a_304_for_a_large_answer_carries_the_tag_and_vary_its_200_was_sent_with(
    accept_encoding: str | None,
) -> None:
    svc = service(gzip_min_bytes=1024)
    path = await put_big(svc)
    sent = await call(svc, "GET", path, accept_encoding=accept_encoding)
    held = header(sent, "etag")
    assert held is not None and held.endswith('-gzip"') is (accept_encoding is not None)

    unchanged = await call(svc, "GET", path, accept_encoding=accept_encoding, if_none_match=held)

    assert (unchanged.status, unchanged.body) == (304, b"")
    assert header(unchanged, "etag") == held  # RFC 9110 15.4.5: the validator the 200 had
    assert header(unchanged, "vary") == "accept-encoding"
    assert header(unchanged, "content-encoding") is None


async def test_the_identity_answer_of_a_large_body_says_vary_too() -> None:
    svc = service(gzip_min_bytes=1024)
    path = await put_big(svc)

    for accept in (None, "identity", "gzip;q=0, br"):
        reply = await call(svc, "GET", path, accept_encoding=accept)

        assert header(reply, "content-encoding") is None
        assert header(reply, "vary") == "accept-encoding"


async def test_a_small_answer_is_never_gzipped_nor_varies() -> None:
    svc = service(gzip_min_bytes=1024)
    assert (await svc.put("small", {"videos": MANY[:3]})).status == 201

    for path in ("/collections/small", "/collections/small/stats", "/healthz"):
        reply = await call(svc, "GET", path, accept_encoding="gzip")

        assert reply.status == 200
        assert len(reply.body) < 1024
        assert header(reply, "content-encoding") is None
        assert header(reply, "vary") is None


async def test_compression_off_leaves_every_answer_as_it_was() -> None:
    svc = service(gzip_min_bytes=0)
    path = await put_big(svc)

    reply = await call(svc, "GET", path, accept_encoding="gzip")

    assert header(reply, "content-encoding") is None
    assert header(reply, "vary") is None


async def test_head_is_not_compressed_but_varies_as_get() -> None:
    svc = service(gzip_min_bytes=1024)
    path = await put_big(svc)

    head = await call(svc, "HEAD", path, accept_encoding="gzip")
    get = await call(svc, "GET", path)

    assert header(head, "content-encoding") is None
    assert header(head, "vary") == "accept-encoding"
    assert [name for name, _ in head.headers] == [name for name, _ in get.headers]


async def test_the_openapi_document_is_compressed_once_when_the_api_is_built() -> None:
    document = b'{"openapi":"3.1.0","padding":"' + b"x" * 4000 + b'"}'
    svc = service(gzip_min_bytes=1024, openapi=document)

    first = await call(svc, "GET", "/openapi.json", accept_encoding="gzip")
    second = await call(svc, "GET", "/openapi.json", accept_encoding="gzip")

    assert gzip.decompress(first.body) == document
    assert first.body is second.body  # the one compressed copy, not compressed per request


async def test_a_docs_file_is_compressed_once_then_kept() -> None:
    svc = service(gzip_min_bytes=1024)
    path = next(t for t in ROUTES if t.endswith("swagger-ui.css"))

    first = await call(svc, "GET", path, accept_encoding="gzip")
    second = await call(svc, "GET", path, accept_encoding="gzip")

    assert header(first, "content-encoding") == "gzip"
    assert first.body is second.body


@pytest.mark.parametrize(
    "reply",
    [
        Reply(204, b""),
        Reply(304, b"", headers=(("etag", '"a"'),)),
        Reply(200, b"\x89PNG" + b"x" * 2000, "image/png"),
        Reply(200, b"x" * 2000, headers=(("content-encoding", "br"),)),
    ],
)
def test_what_is_never_gzipped(reply: Reply) -> None:
    encoded = Gzip(10).encode(reply, "GET", "gzip")

    assert encoded.body is reply.body
    assert ("content-encoding", "gzip") not in encoded.headers


def test_an_svg_is_gzipped_and_a_strong_etag_names_the_gzip_representation() -> None:
    svg = Reply(200, b"<svg>" + b" " * 2000 + b"</svg>", "image/svg+xml", (("etag", '"abc"'),))
    weak = Reply(200, b"{}" + b" " * 2000, headers=(("etag", 'W/"abc"'),))

    assert header(Gzip(10).encode(svg, "GET", "gzip"), "etag") == '"abc-gzip"'
    assert header(Gzip(10).encode(svg, "GET", "identity"), "etag") == '"abc"'
    assert header(Gzip(10).encode(weak, "GET", "gzip"), "etag") == 'W/"abc-gzip"'


def test_the_same_body_compresses_to_the_same_bytes() -> None:
    body = b'{"a":' + b"1" * 5000 + b"}"

    first = Gzip(10).encode(Reply(200, body), "GET", "gzip").body
    second = Gzip(10).encode(Reply(200, bytes(body)), "GET", "gzip").body

    assert first == second  # mtime 0: a cache or a test can compare them
    assert gzip.decompress(first) == body


# --- without CORS (the cors slice: test_http_api_cors) -----------------------------------------


async def test_without_cors_an_options_is_the_405_it_always_was_and_nothing_is_added() -> None:
    svc = service()

    preflight = await call(svc, "OPTIONS", "/collections/c/stats", origin=APP, cors_method="GET")
    get = await call(svc, "GET", "/healthz", origin=APP)

    assert preflight.status == 405
    assert header(preflight, "allow") == "GET, HEAD"
    for reply in (preflight, get):
        assert not [name for name, _ in reply.headers if name.startswith("access-control-") or name == "vary"]
