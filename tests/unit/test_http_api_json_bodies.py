"""JSON bodies through ``HttpApi``: a refresh takes only ``{}`` sent as JSON, and no object of
any body may give a key twice.

A refresh used to take any Content-Type and no body, so a cross-site form (which can send
only form and text types without a preflight) could spend the quota of a service without
a write token; and ``{"playlist":"A","playlist":"B"}`` was read as ``B``.
"""

from __future__ import annotations

import msgspec
import pytest
from returns.result import Result, Success

from influencer_stats.domain.models import CollectionSource, ReadError, VideoId
from influencer_stats.http.body import is_json, repeated_key
from influencer_stats.http.problems import Reply
from tests.unit.http_api_support import ORIGINAL_VIDEOS, TOKEN, Body, Service, assert_problem, service

V = tuple(VideoId(f"video{n:06d}") for n in range(3))


class CountingReader:
    """Every source holds ``V``; ``reads`` counts what would have spent quota."""

    def __init__(self) -> None:
        self.reads = 0

    async def videos(self, source: CollectionSource, limit: int) -> Result[tuple[VideoId, ...], ReadError]:
        self.reads += 1
        return Success(V)


async def _refresh(api: Service, body: bytes, content_type: str | None, **headers: str) -> Reply:
    return await api.request(
        "POST", "/collections/c/refresh", Body([body], len(body)), content_type=content_type, **headers
    )


async def _sourced() -> tuple[Service, CountingReader]:
    reader = CountingReader()
    api = service(reader=reader)
    assert (await api.put("c", {"playlist": "PLdemo3"})).status == 201
    reader.reads = 0
    return api, reader


@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "text/plain",
        "text/plain; charset=application/json",
        "application/jsonx",
        "application/json-seq",
    ],
)
async def test_a_refresh_not_sent_as_json_is_a_415_and_reads_nothing(content_type: str | None) -> None:
    api, reader = await _sourced()

    reply = await _refresh(api, b"{}", content_type)

    assert assert_problem(reply, 415)["type"] == "urn:influencer-stats:problem:unsupported-media-type"
    assert reader.reads == 0


@pytest.mark.parametrize(
    "content_type", ["application/json", "Application/JSON", "application/json; charset=utf-8"]
)
async def test_a_refresh_of_the_empty_object_sent_as_json_reads_the_source(content_type: str) -> None:
    api, reader = await _sourced()

    reply = await _refresh(api, b" { } ", content_type)

    assert reply.status == 200 and reader.reads == 1


@pytest.mark.parametrize(
    ("body", "status"),
    [(b"", 400), (b"{", 400), (b"[]", 422), (b"null", 422), (b'{"playlist":"PLother"}', 422)],
)
async def test_a_refresh_whose_body_is_not_the_empty_object_is_refused(body: bytes, status: int) -> None:
    api, reader = await _sourced()

    assert_problem(await _refresh(api, body, "application/json"), status)
    assert reader.reads == 0


async def test_without_the_token_a_refresh_is_a_401_before_its_content_type_is_looked_at() -> None:
    api = service(write_token=TOKEN)

    assert_problem(await _refresh(api, b"", None), 401)
    assert_problem(await _refresh(api, b"", None, authorization=f"Bearer {TOKEN}"), 415)


@pytest.mark.parametrize(
    "body",
    [
        b'{"playlist":"PLdemo3","playlist":"PLdemo30"}',
        b'{"videos":["-4lB5EKS5Uk"],"videos":["-jlLkTtgWUk"]}',
        b'{"videos":["-4lB5EKS5Uk"],"vid\\u0065os":["-jlLkTtgWUk"]}',  # the same key, escaped
    ],
)
async def test_a_put_giving_a_key_twice_is_a_422_and_stores_nothing(body: bytes) -> None:
    api = service()

    reply = await api.request("PUT", "/collections/c", Body([body], len(body)))

    problem = assert_problem(reply, 422)
    assert problem["field"] in ("playlist", "videos") and "more than once" in str(problem["detail"])
    assert_problem(await api.get("/collections/c"), 404)


async def test_a_put_of_unique_keys_is_stored_as_before() -> None:
    api = service()

    assert (await api.put("c", {"videos": ORIGINAL_VIDEOS})).status == 201


@pytest.mark.parametrize(
    ("text", "repeated"),
    [
        (b'{"a":1}', None),
        (b'{"a":"x:y","b":"::"}', None),  # colons inside strings: the slow path, which finds none
        (b'{"a":{"b":1,"c":2}}', None),
        (b'{"a":1,"a":2}', "a"),
        (b'{"a":{"b":1,"b":2}}', "b"),
        (b'[{"k":1},{"k":2,"k":3}]', "k"),
        (b'{"a\\u0062":1,"ab":2}', "ab"),
    ],
)
def test_a_repeated_key_is_found_at_any_depth(text: bytes, repeated: str | None) -> None:
    assert repeated_key(text, msgspec.json.decode(text)) == repeated


def test_a_body_of_unique_keys_is_checked_without_decoding_it_again(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> object:
        raise AssertionError("decoded again")

    monkeypatch.setattr("influencer_stats.http.body.json.loads", refuse)
    text = b'{"videos":["' + b'","'.join([b"-4lB5EKS5Uk"] * 5_000) + b'"]}'

    assert repeated_key(text, {"videos": []}) is None


@pytest.mark.parametrize(
    ("header", "json"),
    [
        ("application/json", True),
        (" application/json ;charset=utf-8", True),
        (None, False),
        ("text/json", False),
    ],
)
def test_is_json_reads_the_media_type_before_any_parameter(header: str | None, json: bool) -> None:
    assert is_json(header) is json
