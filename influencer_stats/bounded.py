"""Reading a body without ever holding more of it than a limit.

One reader for every body the service receives: the request bodies of each
server (``http.body.read_request_body``) and the ``videos.list`` answers of
each YouTube client. Each caller adapts its library's chunk iterator (and
declared length) to it. At the bottom of the house, so the HTTP edge and the
interpreters share it without importing each other.
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
