"""JSON bodies of the ``sources`` slice through ``HttpApi``: a refresh takes only ``{}`` sent as
JSON, and a PUT naming a source may not give a key twice.

A refresh used to take any Content-Type and no body, so a cross-site form (which can send
only form and text types without a preflight) could spend the quota of a service without
a write token; and ``{"playlist":"A","playlist":"B"}`` was read as ``B``.
"""

from __future__ import annotations

import pytest
from returns.result import Result, Success

from influencer_stats.domain.models import CollectionSource, ReadError, VideoId
from influencer_stats.http.problems import Reply
from tests.unit.http_api_support import TOKEN, Body, assert_problem
from tests.unit.sources_support import SourcesService, sources_service

V = tuple(VideoId(f"video{n:06d}") for n in range(3))


class CountingReader:
    """Every source holds ``V``; ``reads`` counts what would have spent quota."""

    def __init__(self) -> None:
        self.reads = 0

    async def videos(self, source: CollectionSource, limit: int) -> Result[tuple[VideoId, ...], ReadError]:
        self.reads += 1
        return Success(V)


async def _refresh(api: SourcesService, body: bytes, content_type: str | None, **headers: str) -> Reply:
    return await api.request(
        "POST", "/collections/c/refresh", Body([body], len(body)), content_type=content_type, **headers
    )


async def _sourced() -> tuple[SourcesService, CountingReader]:
    reader = CountingReader()
    api = sources_service(reader=reader)
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
    api = sources_service(write_token=TOKEN)

    assert_problem(await _refresh(api, b"", None), 401)
    assert_problem(await _refresh(api, b"", None, authorization=f"Bearer {TOKEN}"), 415)


async def test_a_put_giving_a_source_key_twice_is_a_422_and_stores_nothing() -> None:
    api = sources_service()
    body = b'{"playlist":"PLdemo3","playlist":"PLdemo30"}'

    reply = await api.request("PUT", "/collections/c", Body([body], len(body)))

    problem = assert_problem(reply, 422)
    assert problem["field"] == "playlist" and "more than once" in str(problem["detail"])
    assert_problem(await api.get("/collections/c"), 404)
