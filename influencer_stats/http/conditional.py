"""Validators and conditional GETs: a strong ``ETag`` on an answer, ``304`` when the client has it.

A strong entity tag names one representation (RFC 9110 8.8.3): here the hash of the identity
body, 16 bytes of BLAKE2b in hex (``etag_of``), so the same bytes always carry the same tag,
on every server and every worker, whatever headers vary beside them (a cached stats answer's
``Age`` and ``Cache-Status``). The handlers of the routes that have one tag their 200s
(``tagged``; the stats route through ``stats_reply``, which keeps the tag with the reply it
keeps); ``HttpApi`` then answers a GET or HEAD whose ``If-None-Match`` names the tag with
``not_modified``: a 304 without a body, with the tag and the cache headers the 200 carried.

If-None-Match is compared weakly (RFC 9110 13.1.2: ``W/"x"`` names ``"x"``), ``*`` names any
answer, and a list names what any of its tags names. A compressed representation of an answer
carries the answer's tag with ``-gzip`` inside the quotes (the compression layer appends it);
a client that cached either one is answered 304 (``same_answer``).
"""

from __future__ import annotations

import re
from hashlib import blake2b

from influencer_stats.http.problems import Reply

ETAG = "etag"
#: What a gzipped representation's tag adds to the identity body's, inside the quotes.
GZIP_SUFFIX = "-gzip"
#: The headers a 304 keeps of the 200 it stands for (RFC 9110 15.4.5: those a cache updates its
#: stored answer with; RFC 9111 ``Age`` and RFC 9211 ``Cache-Status`` say how this one was served).
_KEPT = frozenset(
    {ETAG, "cache-control", "content-location", "date", "expires", "vary", "age", "cache-status"}
)
#: One entity tag of a list, weak or strong; its opaque text is group 1. Elements that are not
#: entity tags (a client's garbage) name nothing, and the answer is the full 200.
_ENTITY_TAG = re.compile(r'(?:W/)?"([^"]*)"')


def etag_of(body: bytes) -> str:
    """The strong entity tag of ``body``: 32 hex digits (BLAKE2b of 16 bytes), quoted."""
    return f'"{blake2b(body, digest_size=16).hexdigest()}"'


def tagged(reply: Reply) -> Reply:
    """``reply`` with its ``ETag`` first among its headers when it is a 200; any other as it is."""
    if reply.status != 200:
        return reply
    status, body, content_type, headers = reply
    return Reply(status, body, content_type, ((ETAG, etag_of(body)), *headers))


def same_answer(given: str, etag: str) -> bool:
    """Whether the opaque tag ``given`` (without quotes) names the answer tagged ``etag`` (its
    opaque tag too): the same tag, or the one of its gzipped representation."""
    return given == etag or (given.endswith(GZIP_SUFFIX) and given[: -len(GZIP_SUFFIX)] == etag)


def names(if_none_match: str, etag: str) -> bool:
    """Whether an ``If-None-Match`` field value names the answer tagged ``etag`` (quoted, strong):
    ``*``, or a list holding its tag, weak or strong, or its gzipped representation's."""
    if if_none_match.strip() == "*":
        return True
    opaque = etag[1:-1]
    return any(same_answer(given, opaque) for given in _ENTITY_TAG.findall(if_none_match))


def etag_in(reply: Reply) -> str | None:
    """The ``ETag`` among ``reply``'s headers, if it has one."""
    return next((value for name, value in reply.headers if name == ETAG), None)


def not_modified(reply: Reply, if_none_match: str) -> Reply:
    """304 in place of the 200 ``reply`` when ``if_none_match`` names its tag; else ``reply``.

    An answer without a tag, or other than a 200, is never turned into a 304 (RFC 9110 13.2.1:
    the conditions are evaluated only where the answer would be a 2xx)."""
    if reply.status != 200:
        return reply
    etag = etag_in(reply)
    if etag is None or not names(if_none_match, etag):
        return reply
    return Reply(304, b"", "", tuple((name, value) for name, value in reply.headers if name in _KEPT))
