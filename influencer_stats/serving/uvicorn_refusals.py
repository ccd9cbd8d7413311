"""The answers the hardened uvicorn protocol writes itself, before or instead of the app.

A refusal (408, 431) goes out as raw bytes once every earlier response on the
connection is sent, then the connection closes; over the concurrency limit
the ``overloaded`` ASGI app answers a problem+json 503 (uvicorn's own is plain
text). Each carries a new request id, as every answer of the service does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from uvicorn.protocols.http.httptools_impl import STATUS_LINE

from influencer_stats.http.incoming import new_request_id
from influencer_stats.http.problems import Reply, problem

if TYPE_CHECKING:
    from uvicorn._types import ASGIReceiveCallable, ASGISendCallable, Scope


def refusal_headers(reply: Reply) -> list[tuple[bytes, bytes]]:
    """A refusal's headers: its own, a new request id, and ``Connection: close``."""
    return [
        (b"content-type", reply.content_type.encode()),
        (b"content-length", str(len(reply.body)).encode()),
        *((name.encode(), value.encode()) for name, value in reply.headers),
        (b"x-request-id", new_request_id().encode()),
        (b"connection", b"close"),
    ]


def refusal_bytes(reply: Reply, default_headers: list[tuple[bytes, bytes]]) -> bytes:
    """A refusal as the bytes of a complete HTTP/1.1 response."""
    fields = b"".join(b"%s: %s\r\n" % header for header in (*default_headers, *refusal_headers(reply)))
    return STATUS_LINE[reply.status] + fields + b"\r\n" + reply.body


OVERLOADED = problem(
    503,
    "overloaded",
    "Service overloaded",
    "too many connections or requests in progress; retry shortly",
    headers=(("retry-after", "1"),),
)


async def overloaded(scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable) -> None:
    """The ASGI app that answers over the concurrency limit (uvicorn's own is plain text)."""
    await send({"type": "http.response.start", "status": 503, "headers": refusal_headers(OVERLOADED)})
    await send({"type": "http.response.body", "body": OVERLOADED.body, "more_body": False})
