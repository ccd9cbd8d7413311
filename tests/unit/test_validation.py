"""Input rules: ids and the collection body."""

from __future__ import annotations

import pytest
from returns.result import Failure, Success

from influencer_stats.domain.validation import (
    DEFAULT_MAX_VIDEOS,
    InvalidInput,
    parse_collection_body,
    parse_collection_id,
)


@pytest.mark.parametrize("raw", ["a", "99757a95-f758-499f-a170-bea93b2d8bcf", "x" * 64, "v1.2_final-cut"])
def test_collection_ids_of_1_to_64_safe_characters_are_accepted(raw: str) -> None:
    assert parse_collection_id(raw) == Success(raw)


@pytest.mark.parametrize("raw", ["", "x" * 65, "a b", "a/b", "é", "a,b", "a%2Fb"])
def test_other_collection_ids_are_rejected_naming_the_field(raw: str) -> None:
    match parse_collection_id(raw):
        case Failure(InvalidInput(field="id")):
            pass
        case other:
            raise AssertionError(other)


def test_a_well_formed_body_gives_the_videos_in_order_with_duplicates() -> None:
    body = {"videos": ["-4lB5EKS5Uk", "-jlLkTtgWUk", "-4lB5EKS5Uk"]}

    assert parse_collection_body(body) == Success(("-4lB5EKS5Uk", "-jlLkTtgWUk", "-4lB5EKS5Uk"))


@pytest.mark.parametrize(
    ("body", "field", "value"),
    [
        ([], "body", "[]"),
        ("videos", "body", "videos"),
        ({}, "videos", None),
        ({"videos": "-4lB5EKS5Uk"}, "videos", "-4lB5EKS5Uk"),
        ({"videos": [], "extra": 1}, "extra", 1),
        ({"videos": ["-4lB5EKS5Uk", "short"]}, "videos[1]", "short"),
        ({"videos": [42]}, "videos[0]", 42),
        ({"videos": ["-4lB5EKS5U,"]}, "videos[0]", "-4lB5EKS5U,"),
        ({"videos": [None]}, "videos[0]", None),
    ],
)
def test_a_wrong_body_names_the_field_and_the_offending_value(
    body: object, field: str, value: object
) -> None:
    match parse_collection_body(body):
        case Failure(InvalidInput(field=got_field, value=got_value)):
            assert (got_field, got_value) == (field, value)
        case other:
            raise AssertionError(other)


def test_at_most_5000_videos_are_accepted_by_default() -> None:
    assert DEFAULT_MAX_VIDEOS == 5_000
    assert isinstance(parse_collection_body({"videos": ["-4lB5EKS5Uk"] * DEFAULT_MAX_VIDEOS}), Success)
    match parse_collection_body({"videos": ["-4lB5EKS5Uk"] * (DEFAULT_MAX_VIDEOS + 1)}):
        case Failure(InvalidInput(field="videos", value=count)):
            assert count == DEFAULT_MAX_VIDEOS + 1
        case other:
            raise AssertionError(other)


@pytest.mark.parametrize("limit", [1, 3, 10_000])
def test_the_limit_is_the_callers(limit: int) -> None:
    assert isinstance(parse_collection_body({"videos": ["-4lB5EKS5Uk"] * limit}, limit), Success)
    match parse_collection_body({"videos": ["-4lB5EKS5Uk"] * (limit + 1)}, limit):
        case Failure(InvalidInput(field="videos", value=count, reason=reason)):
            assert count == limit + 1
            assert reason == f"must hold at most {limit} ids"
        case other:
            raise AssertionError(other)


def test_a_huge_offending_value_is_clipped_in_the_error() -> None:
    match parse_collection_id("a" * 10_000):
        case Failure(InvalidInput(value=str(value))):
            assert len(value) <= 101
        case other:
            raise AssertionError(other)


def test_an_offending_integer_beyond_64_bits_still_gives_a_problem_body() -> None:
    from influencer_stats.http.problems import invalid_input

    match parse_collection_body({"videos": [], "x": -136197821420265668608}):
        case Failure(invalid):
            reply = invalid_input(invalid)
        case other:
            raise AssertionError(other)

    assert reply.status == 422
    assert b"-136197821420265668608" in reply.body
