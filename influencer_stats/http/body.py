"""Reading a body without ever holding more of it than a limit.

One reader for every body the service receives: the request bodies of each
server adapter and the ``videos.list`` answers of each YouTube client. Each
caller adapts its library's chunk iterator (and declared length) to it.
"""

from __future__ import annotations

from collections.abc import AsyncIterable


async def read_bounded(chunks: AsyncIterable[bytes], limit: int, declared: int | None = None) -> bytes | None:
    """The whole body, or None as soon as it passes ``limit`` bytes.

    A ``declared`` length (Content-Length) over ``limit`` refuses before a
    single chunk is read; a body that streams past ``limit`` (a chunked one, or
    one longer than declared) is refused at the chunk that passes it, and
    nothing more is read. An iterator that ends early (the peer went away)
    yields what arrived.
    """
    if declared is not None and declared > limit:
        return None
    parts: list[bytes] = []
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > limit:
            return None
        if chunk:
            parts.append(chunk)
    # One chunk (a small body usually is) is returned as it came, without a copy.
    return parts[0] if len(parts) == 1 else b"".join(parts)


def content_length(value: str | bytes | None) -> int | None:
    """A Content-Length header's value, or None when absent or not ASCII digits.

    (``str.isdigit`` alone accepts ``"²"``, which ``int`` refuses.) An invalid
    value is the server's to reject; here it only means "not declared".
    """
    if value is None or not value.isdigit() or not value.isascii():
        return None
    return int(value)
