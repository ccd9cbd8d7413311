"""The one bounded body reader, used by every server adapter and every YouTube client."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from influencer_stats.http.body import content_length, read_bounded


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
