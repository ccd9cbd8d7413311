"""What a server hands ``HttpApi`` for one request (``Incoming``), and the request ids and
method labels every layer of the answer shares."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from random import getrandbits as _random_bits
from typing import TYPE_CHECKING

from influencer_stats.http.problems import Reply

if TYPE_CHECKING:
    from influencer_stats.http.route_table import Route

_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
#: The methods HTTP defines (RFC 9110, PATCH, WebDAV and the rest of the list llhttp parses).
#: uvicorn's and aiohttp's parsers refuse any other method with a 400 before an app runs; the
#: edge refuses it with a 400 too where a server lets it through (Granian takes any token), so
#: all four agree. A method in this set that a route does not answer is a 405 with Allow.
HTTP_METHODS = frozenset(
    {
        "ACL", "BIND", "CHECKOUT", "CONNECT", "COPY", "DELETE", "GET", "HEAD", "LINK", "LOCK",
        "M-SEARCH", "MERGE", "MKACTIVITY", "MKCALENDAR", "MKCOL", "MOVE", "NOTIFY", "OPTIONS",
        "PATCH", "POST", "PROPFIND", "PROPPATCH", "PURGE", "PUT", "QUERY", "REBIND", "REPORT",
        "SEARCH", "SOURCE", "SUBSCRIBE", "TRACE", "UNBIND", "UNLINK", "UNLOCK", "UNSUBSCRIBE",
    }
)  # fmt: skip

BodyReader = Callable[[int], Awaitable[bytes | None]]


async def no_body(_: int) -> bytes | None:
    """The ``BodyReader`` of a request without a body (or whose body no handler reads)."""
    return b""


@dataclass(slots=True)
class Incoming:
    """What a server hands over: the matched route and the request's parts.

    ``read_body(limit)`` returns the body, or None as soon as it exceeds ``limit`` bytes (servers
    build it on ``body.read_request_body``, so none ever buffers more than that), and raises
    ``BodyIncomplete`` when the client went away before the whole body arrived; ``collection_id``
    is percent-decoded, once split off the path as received (``RouteTable.match_raw``).
    ``query`` is the raw query string, without the ``?`` and not yet percent-decoded.
    """

    route: Route
    method: str
    collection_id: str = ""
    request_id: str | None = None
    #: Every Authorization field line received, joined with ", " (RFC 9110 5.3): two lines
    #: never authorize a write, whichever of them a framework would have picked.
    authorization: str | None = None
    read_body: BodyReader = no_body
    query: str = ""
    #: The W3C ``traceparent`` header; servers read it only when the API traces (``HttpApi.traced``).
    traceparent: str | None = None
    #: The Content-Type header (the first), for handlers that take only JSON (a slice's POST).
    content_type: str | None = None
    #: The address the request came from, and every X-Forwarded-For line joined (``Caller``).
    peer: str | None = None
    forwarded_for: str | None = None
    #: Every If-None-Match line, joined with ", " (a list header): a GET or HEAD whose tagged 200
    #: it names is answered 304 (``conditional``).
    if_none_match: str | None = None
    #: The Accept-Encoding header (the first): whether a large answer may be gzipped (``encoding``).
    accept_encoding: str | None = None
    #: The Origin and Access-Control-Request-Method headers; servers read them only when the API
    #: answers CORS (``HttpApi.cors``).
    origin: str | None = None
    cors_method: str | None = None


def request_id_of(header: str | None) -> str:
    """The client's id when it is a sane one, else a new one."""
    return header if header is not None and _REQUEST_ID.fullmatch(header) else new_request_id()


def with_request_id(reply: Reply, request_id: str) -> Reply:
    """``reply`` with ``X-Request-Id: request_id`` last among its headers."""
    # Reply(...) directly: NamedTuple._replace costs twice as much, on every request.
    status, body, content_type, headers = reply
    return Reply(status, body, content_type, (*headers, ("x-request-id", request_id)))


def method_label(method: str) -> str:
    """The method as a metrics label: one of a closed set."""
    return method if method in HTTP_METHODS else "other"


def new_request_id() -> str:
    """16 hex digits; unique enough to correlate logs, cheap (no syscall), not a secret."""
    return f"{_random_bits(64):016x}"
