"""CORS (the ``cors`` slice), through ``HttpApi`` as a server calls it (issue 34).

``tests/integration/test_conventions_http.py`` proves each server hands the headers over and
writes what these decide.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from influencer_stats.algebras import EventLog, Metrics
from influencer_stats.http.cors import ALLOW_HEADERS, EXPOSE_HEADERS, MAX_AGE_S, cors_layer, parse_origins
from influencer_stats.http.layers import EdgeLayer
from influencer_stats.settings import declared
from tests.unit.http_api_support import call, header, put_big, service

APP = "https://app.example.com"


def cors(*origins: str) -> Callable[[EventLog, Metrics], Sequence[EdgeLayer]]:
    """The ``layers`` of a service with CORS for ``origins``, as the slice builds them."""
    return lambda _, metrics: [cors_layer(origins, metrics)]


# --- CORS ----------------------------------------------------------------------------------------


async def test_a_preflight_from_an_allowed_origin_is_a_204_naming_what_it_may_do() -> None:
    svc = service(layers=cors(APP))

    reply = await call(svc, "OPTIONS", "/collections/c", origin=APP, cors_method="PUT")

    assert reply.status == 204
    assert reply.body == b""
    assert header(reply, "access-control-allow-origin") == APP
    assert header(reply, "access-control-allow-methods") == "DELETE, GET, HEAD, PUT"  # as Allow names them
    assert header(reply, "access-control-allow-headers") == ALLOW_HEADERS
    assert "authorization" in ALLOW_HEADERS  # a bearer token is never a wildcard's
    assert header(reply, "access-control-max-age") == str(MAX_AGE_S)
    assert header(reply, "vary") == "origin"
    assert header(reply, "x-request-id")
    assert ("/collections/{id}", "OPTIONS", 204) in svc.metrics.requests


async def test_a_preflight_from_another_origin_gets_no_cors_header() -> None:
    svc = service(layers=cors(APP))

    reply = await call(svc, "OPTIONS", "/collections/c", origin="https://evil.example", cors_method="PUT")

    assert reply.status == 405
    assert not [name for name, _ in reply.headers if name.startswith("access-control-")]
    assert header(reply, "vary") == "origin"


async def test_an_options_that_is_no_preflight_keeps_its_405() -> None:
    svc = service(layers=cors(APP))

    without_method = await call(svc, "OPTIONS", "/collections/c", origin=APP)
    without_origin = await call(svc, "OPTIONS", "/collections/c", cors_method="PUT")

    assert without_method.status == without_origin.status == 405


async def test_an_answer_to_an_allowed_origin_says_so_and_exposes_the_api_headers() -> None:
    svc = service(layers=cors(APP, "http://localhost:3000"))
    path = await put_big(svc)

    reply = await call(svc, "GET", path, origin=APP)
    other = await call(svc, "GET", path, origin="https://evil.example")
    none = await call(svc, "GET", path)

    assert header(reply, "access-control-allow-origin") == APP
    exposed = {name.strip() for name in EXPOSE_HEADERS.split(",")}
    assert {"x-request-id", "etag", "link", "retry-after"} <= exposed
    assert header(reply, "access-control-expose-headers") == EXPOSE_HEADERS
    for answer in (reply, other, none):
        assert header(answer, "vary") == "origin"
    assert header(other, "access-control-allow-origin") is None
    assert header(none, "access-control-allow-origin") is None


async def test_any_origin_answers_star_and_does_not_vary() -> None:
    svc = service(layers=cors("*"))

    preflight = await call(svc, "OPTIONS", "/collections/c", origin=APP, cors_method="DELETE")
    get = await call(svc, "GET", "/healthz", origin=APP)

    assert header(preflight, "access-control-allow-origin") == "*"
    assert header(get, "access-control-allow-origin") == "*"
    assert header(preflight, "vary") is None
    assert header(get, "vary") is None


async def test_gzip_and_cors_share_one_vary() -> None:
    svc = service(layers=cors(APP), gzip_min_bytes=1024)
    path = await put_big(svc)

    reply = await call(svc, "GET", path, origin=APP, accept_encoding="gzip")

    assert [value for name, value in reply.headers if name == "vary"] == ["accept-encoding, origin"]
    assert header(reply, "content-encoding") == "gzip"


# --- the settings --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        ("https://App.Example.com, http://localhost:3000", "https://app.example.com,http://localhost:3000"),
        (" * ", "*"),
        ("http://[::1]:8080,http://[::1]:8080", "http://[::1]:8080"),
    ],
)
def test_the_origins_setting_takes_origins_or_a_star(raw: str, parsed: str) -> None:
    assert declared()["cors_origins"].parse(raw) == parsed
    assert parse_origins(parsed) == tuple(parsed.split(","))


@pytest.mark.parametrize(
    "raw",
    ["https://app.example.com/", "app.example.com", "null", "*,https://a.example", "ftp://a.example", ","],
)
def test_the_origins_setting_refuses_what_is_no_origin(raw: str) -> None:
    with pytest.raises(ValueError, match="INFLUENCER_STATS_CORS_ORIGINS must be origins"):
        declared()["cors_origins"].parse(raw)
