"""Paging ``GET /collections``: the query's ``limit`` and ``cursor``, and the page's body.

A page answers ``{"ids": [...], "next": "<cursor>"}`` with ``next`` only when more ids
follow, so a listing that fits in one page keeps the original shape ``{"ids": [...]}``.
The cursor marks where the page ended (keyset paging: the store answers the ids after
it, O(log n + limit), however deep the page); clients pass ``next`` back unchanged. The
next page's address is also the answer's ``Link`` header (RFC 8288, ``next_link``), for clients
that follow links rather than read bodies.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, urlencode

from returns.result import Failure, Result, Success

from influencer_stats.domain.models import CollectionId
from influencer_stats.domain.validation import InvalidInput

DEFAULT_LIMIT = 100
MAX_LIMIT = 1_000

#: The hex of one character a collection id may hold: - . 0-9 A-Z _ a-z.
_CURSOR_UNIT = "2[de]|3[0-9]|4[1-9a-f]|5[0-9af]|6[1-9a-f]|7[0-9a]"
#: A cursor is the lowercase hex of the page's last id. Hex rather than base64 because every
#: string this pattern matches is then the cursor of a valid id: the OpenAPI document states
#: exactly which cursors the service accepts (schemathesis sends any string the pattern
#: allows and expects it accepted), which no readable pattern does for base64.
CURSOR_PATTERN = f"^(?:{_CURSOR_UNIT}){{1,64}}$"
_CURSOR = re.compile(f"(?:{_CURSOR_UNIT}){{1,64}}")
_LIMIT = re.compile("[0-9]{1,7}")  # ASCII digits only (int() takes "+5", " 5", "٥")
_LIMIT_RULE = f"must be an integer from 1 to {MAX_LIMIT}"
_CURSOR_RULE = "must be a page's next, unchanged"


@dataclass(frozen=True, slots=True)
class PageRequest:
    """The ids wanted: at most ``limit`` of them, after ``after`` (None: from the first)."""

    after: CollectionId | None = None
    limit: int = DEFAULT_LIMIT


def parse_page_request(query: str) -> Result[PageRequest, InvalidInput]:
    """``limit`` (1 to ``MAX_LIMIT``, default ``DEFAULT_LIMIT``) and ``cursor`` from a query string.

    Other parameters are ignored; ``limit`` or ``cursor`` given twice is invalid.
    """
    given: dict[str, str] = {}
    for name, value in parse_qsl(query, keep_blank_values=True):
        if name in ("limit", "cursor"):
            if name in given:
                return Failure(InvalidInput(name, _clip(value), "must be given at most once"))
            given[name] = value
    limit = DEFAULT_LIMIT
    if "limit" in given:
        raw = given["limit"]
        if not _LIMIT.fullmatch(raw) or not 1 <= int(raw) <= MAX_LIMIT:
            return Failure(InvalidInput("limit", _clip(raw), _LIMIT_RULE))
        limit = int(raw)
    after = None
    if "cursor" in given:
        raw = given["cursor"]
        if not _CURSOR.fullmatch(raw):
            return Failure(InvalidInput("cursor", _clip(raw), _CURSOR_RULE))
        after = CollectionId(bytes.fromhex(raw).decode("ascii"))
    return Success(PageRequest(after, limit))


def cursor_of(collection_id: CollectionId) -> str:
    """The cursor of the page that ends with ``collection_id``."""
    return collection_id.encode("ascii").hex()


def page_body(ids: Sequence[CollectionId], limit: int) -> dict[str, object]:
    """The answer, from the store's ``limit + 1`` ids (one more says whether more follow)."""
    if len(ids) <= limit:
        return {"ids": ids}
    shown = ids[:limit]
    return {"ids": shown, "next": cursor_of(shown[-1])}


def next_link(path: str, query: str, cursor: str, kept: tuple[str, ...] = ("limit",)) -> tuple[str, str]:
    """The ``Link`` header to the page after this one: ``path``, the ``kept`` parameters of the
    request's ``query`` with the values it gave (the others, and its cursor, left out), then
    ``cursor``.

    A URI reference relative to the service (``</collections?limit=2&cursor=…>; rel="next"``),
    every value percent-encoded, so nothing the client sent can end the header or its ``<…>``.
    """
    pairs = [(name, value) for name, value in parse_qsl(query, keep_blank_values=True) if name in kept]
    target = urlencode([*pairs, ("cursor", cursor)], safe=":", quote_via=quote)
    return "link", f'<{path}?{target}>; rel="next"'


def _clip(value: str, limit: int = 100) -> str:
    """Echo short values as they are; never a whole query string."""
    return value if len(value) <= limit else value[:limit] + "…"
