"""Paging ``GET /collections`` in process: the query's limit and cursor, the page's body.

``tests/integration/test_pagination.py`` proves every server hands the query string
over and every store pages the same way behind a real socket.
"""

from __future__ import annotations

import re

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.result import Failure, Success

from influencer_stats.bootstrap.edge import ROUTES
from influencer_stats.domain.models import CollectionId, VideoId
from influencer_stats.domain.validation import parse_collection_id
from influencer_stats.http.api import HttpApi
from influencer_stats.http.incoming import Incoming
from influencer_stats.http.openapi import openapi_spec
from influencer_stats.http.pagination import (
    CURSOR_PATTERN,
    DEFAULT_LIMIT,
    MAX_LIMIT,
    PageRequest,
    cursor_of,
    page_body,
    parse_page_request,
)
from influencer_stats.http.problems import PROBLEM_JSON
from influencer_stats.http.routes import COLLECTIONS
from influencer_stats.interpreters.collections.memory_dict import DictCollectionStore
from influencer_stats.interpreters.metrics.noop import NoMetrics
from influencer_stats.interpreters.videos.fake import FakeVideoStatsSource
from influencer_stats.logic.service import GetStats
from influencer_stats.testing.event_log import CapturingEventLog

ID_CHARACTERS = "-.0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
collection_ids = st.text(ID_CHARACTERS, min_size=1, max_size=64).map(CollectionId)

# --- the query ----------------------------------------------------------------------------------


def test_without_parameters_the_page_is_the_first_of_100() -> None:
    assert parse_page_request("") == Success(PageRequest(None, DEFAULT_LIMIT))
    assert DEFAULT_LIMIT == 100


@pytest.mark.parametrize(("query", "limit"), [("limit=1", 1), ("limit=1000", 1000), ("limit=%31%30", 10)])
def test_a_limit_from_1_to_1000_is_taken(query: str, limit: int) -> None:
    assert parse_page_request(query) == Success(PageRequest(None, limit))


@pytest.mark.parametrize(
    "value", ["0", "1001", "-1", "", "abc", "1.5", "1e3", "+5", " 5", "5 ", "٥", "99999999999", "10%00"]
)
def test_a_limit_that_is_not_an_integer_from_1_to_1000_is_invalid(value: str) -> None:
    match parse_page_request(f"limit={value}"):
        case Failure(invalid):
            assert invalid.field == "limit"
            assert "from 1 to 1000" in invalid.reason
        case other:
            raise AssertionError(other)


@pytest.mark.parametrize("query", ["limit=5&limit=5", "cursor=61&cursor=62", "limit=5&cursor=61&limit=6"])
def test_a_parameter_given_twice_is_invalid(query: str) -> None:
    assert isinstance(parse_page_request(query), Failure)


def test_other_parameters_are_ignored() -> None:
    assert parse_page_request("sort=desc&limit=7&x&=&cursor_=1") == Success(PageRequest(None, 7))


@pytest.mark.parametrize(
    "cursor",
    [
        "",  # empty
        "6",  # half a character
        "6G",  # not hex
        "4A",  # upper case: a cursor has one spelling
        "2f",  # "/": no id holds it
        "20",  # " "
        "00",  # NUL
        "c3a9",  # "é" in UTF-8
        "61" * 65,  # 65 characters: longer than any id
        "YQ",  # "a" in base64url
        "a",
    ],
)
def test_a_cursor_that_is_not_the_next_of_a_page_is_invalid(cursor: str) -> None:
    match parse_page_request(f"cursor={cursor}"):
        case Failure(invalid):
            assert invalid.field == "cursor"
        case other:
            raise AssertionError(other)


def test_a_long_invalid_value_is_echoed_clipped() -> None:
    match parse_page_request("cursor=" + "x" * 10_000):
        case Failure(invalid):
            assert isinstance(invalid.value, str)
            assert len(invalid.value) <= 101
        case other:
            raise AssertionError(other)


@given(collection_ids)
def test_the_cursor_of_any_id_brings_back_that_id(collection_id: CollectionId) -> None:
    cursor = cursor_of(collection_id)

    assert re.fullmatch(CURSOR_PATTERN, cursor)
    assert parse_page_request(f"limit=3&cursor={cursor}") == Success(PageRequest(collection_id, 3))


@given(st.from_regex(CURSOR_PATTERN, fullmatch=True))
def test_every_cursor_the_documented_pattern_allows_is_a_valid_id(cursor: str) -> None:
    """schemathesis sends any string of the pattern and expects it accepted."""
    match parse_page_request(f"cursor={cursor}"):
        case Success(PageRequest(after=str(after))):
            assert isinstance(parse_collection_id(after), Success)
            assert cursor_of(CollectionId(after)) == cursor
        case other:
            raise AssertionError(other)


def test_the_document_states_the_same_pattern_and_limits() -> None:
    operation = openapi_spec()["paths"]["/collections"]
    parameters = {p["name"]: p["schema"] for p in operation["parameters"]}

    assert parameters["cursor"]["pattern"] == CURSOR_PATTERN
    assert parameters["limit"] == {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": 100}
    ids = openapi_spec()["components"]["schemas"]["Ids"]
    assert ids["properties"]["next"]["pattern"] == CURSOR_PATTERN
    assert ids["required"] == ["ids"]


# --- the body -----------------------------------------------------------------------------------


def test_a_page_with_no_more_ids_after_it_has_the_original_shape() -> None:
    ids = (CollectionId("a"), CollectionId("b"))

    assert page_body(ids, 2) == {"ids": ids}
    assert page_body((), 2) == {"ids": ()}


def test_a_page_with_more_ids_after_it_names_the_next() -> None:
    ids = (CollectionId("a"), CollectionId("b"), CollectionId("c"))

    assert page_body(ids, 2) == {"ids": ids[:2], "next": cursor_of(CollectionId("b"))}


# --- through HttpApi ----------------------------------------------------------------------------


def api(store: DictCollectionStore) -> HttpApi:
    log = CapturingEventLog()
    return HttpApi(
        store,
        GetStats(store, FakeVideoStatsSource(), log),
        log,
        NoMetrics(),
        {},
        write_token=None,
        max_videos=10,
        openapi=b"{}",
    )


async def listing(service: HttpApi, query: str) -> tuple[int, dict[str, object], str]:
    reply = await service.serve(Incoming(ROUTES[COLLECTIONS], "GET", query=query))
    return reply.status, orjson.loads(reply.body), reply.content_type


async def test_paging_through_the_api_lists_every_id_once_and_the_last_page_has_no_next() -> None:
    store = DictCollectionStore()
    stored = sorted(f"c{n:03d}" for n in range(250))
    for collection_id in reversed(stored):
        await store.save(CollectionId(collection_id), (VideoId("-4lB5EKS5Uk"),))
    service = api(store)

    listed: list[object] = []
    query = ""
    for _ in range(10):  # bounded
        status, body, _ = await listing(service, query)
        assert status == 200
        assert isinstance(body["ids"], list)
        assert len(body["ids"]) <= DEFAULT_LIMIT
        listed.extend(body["ids"])
        if "next" not in body:
            break
        query = f"cursor={body['next']}"

    assert listed == stored
    assert len(listed) == 250


async def test_a_listing_that_fits_one_page_is_the_original_answer() -> None:
    store = DictCollectionStore()
    for name in ("b", "a"):
        await store.save(CollectionId(name), ())

    assert await listing(api(store), "") == (200, {"ids": ["a", "b"]}, "application/json")
    assert await listing(api(store), "limit=2") == (200, {"ids": ["a", "b"]}, "application/json")
    assert (await listing(api(store), "limit=1"))[1] == {"ids": ["a"], "next": cursor_of(CollectionId("a"))}


@pytest.mark.parametrize(
    ("query", "field"), [("limit=1001", "limit"), ("limit=x", "limit"), ("cursor=zz", "cursor")]
)
async def test_a_bad_limit_or_cursor_is_a_422_problem_naming_it(query: str, field: str) -> None:
    status, body, content_type = await listing(api(DictCollectionStore()), query)

    assert status == 422
    assert content_type == PROBLEM_JSON
    assert body["type"] == "urn:influencer-stats:problem:validation-error"
    assert body["field"] == field
