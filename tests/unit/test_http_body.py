"""The one bounded body reader, used by every server adapter and every YouTube client."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest

from influencer_stats.bounded import read_bounded
from influencer_stats.http.body import BodyIncomplete, content_length, json_nests_deeper, read_request_body


class Chunks:
    """An async iterator over chunks that counts how many were taken."""

    def __init__(self, *chunks: bytes) -> None:
        self._chunks = chunks
        self.taken = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            self.taken += 1
            yield chunk


async def test_the_chunks_are_joined_in_order() -> None:
    assert await read_bounded(Chunks(b"ab", b"", b"c", b"de"), limit=10) == b"abcde"


async def test_a_single_chunk_is_returned_as_it_came() -> None:
    chunk = b"x" * 100

    assert await read_bounded(Chunks(chunk), limit=100) is chunk


async def test_no_chunks_is_an_empty_body() -> None:
    assert await read_bounded(Chunks(), limit=0) == b""


async def test_a_body_of_exactly_the_limit_is_read() -> None:
    assert await read_bounded(Chunks(b"abc", b"de"), limit=5, declared=5) == b"abcde"


async def test_a_declared_length_over_the_limit_refuses_before_reading() -> None:
    chunks = Chunks(b"a")

    assert await read_bounded(chunks, limit=5, declared=6) is None
    assert chunks.taken == 0


async def test_a_body_that_streams_past_the_limit_is_refused_at_that_chunk() -> None:
    chunks = Chunks(b"abc", b"de", b"f", b"never read")

    assert await read_bounded(chunks, limit=5) is None
    assert chunks.taken == 3


async def test_a_body_longer_than_it_declared_is_refused_all_the_same() -> None:
    assert await read_bounded(Chunks(b"abcdef"), limit=5, declared=3) is None


@pytest.mark.parametrize(
    ("value", "declared"),
    [
        ("12", 12),
        (b"12", 12),
        ("0", 0),
        (None, None),
        ("", None),
        ("-1", None),
        ("1e3", None),
        (" 12", None),
        ("²", None),
        (b"\xb2", None),
    ],
)
def test_content_length_is_ascii_digits_or_not_declared(
    value: str | bytes | None, declared: int | None
) -> None:
    assert content_length(value) == declared


# --- a request body: whole or refused --------------------------------------------------------------


async def test_a_request_body_shorter_than_it_declared_raises_body_incomplete() -> None:
    prefix = b'{"videos":["-4lB5EKS5Uk"]}'  # valid JSON: a prefix must never pass for the body

    with pytest.raises(BodyIncomplete, match="26 of 200"):
        await read_request_body(Chunks(prefix), limit=1024, declared=200)


async def test_a_request_body_of_its_declared_length_or_undeclared_is_read() -> None:
    assert await read_request_body(Chunks(b"ab", b"c"), limit=10, declared=3) == b"abc"
    assert await read_request_body(Chunks(b"ab", b"c"), limit=10) == b"abc"
    assert await read_request_body(Chunks(b"abc"), limit=2, declared=3) is None


# --- JSON depth, before decoding --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "deeper"),
    [
        (b'{"videos": ["-4lB5EKS5Uk"]}', False),
        (b"[" * 4 + b"]" * 4, False),
        (b"[" * 5 + b"]" * 5, True),
        (b'{"a": {"b": {"c": {"d": 1}}}}', False),
        (b'{"a": {"b": {"c": {"d": {}}}}}', True),
        (b"[[],[],[],[],[],[],[],[],[]]", False),  # many brackets, shallow
        (b'["[[[[[[[[[[", "]]]]]]", "{{{{{{"]', False),  # brackets inside strings
        (b'["\\"[[[[[[[[", "\\\\", [[[]]]]', False),  # escaped quotes and backslashes
        (b'["\\\\"[[[[[[[[]', True),  # the string ends at \\" : its brackets are real
        (b"[" * 10, True),  # unclosed
        (b"]]]]][[[[[", True),  # unbalanced
    ],
)
def test_json_depth_is_judged_without_decoding(data: bytes, deeper: bool) -> None:
    assert json_nests_deeper(data, 4) is deeper


def test_a_mebibyte_of_brackets_is_judged_in_well_under_a_second() -> None:
    started = time.perf_counter()

    assert json_nests_deeper(b"[" * 1024 * 1024, 32)
    assert not json_nests_deeper(b"[" + b"[]," * 349_000 + b"[]]", 32)
    assert json_nests_deeper(b'"' + b"[" * 1024 * 1024, 32)  # an unterminated string

    assert time.perf_counter() - started < 0.5
