"""gzip for answers of at least ``min_bytes`` when the client's ``Accept-Encoding`` allows it.

``Gzip.encode`` runs last in ``HttpApi.answer``, after the handler (and whatever it decided, a
304 included), so nothing before it sees a compressed body. An answer smaller than
``min_bytes`` costs one length test and is left as it is, with no ``Vary``: its
representation never depends on the header. A larger one (not a 204 or 304, nor an image
other than SVG: PNG is compressed already) always says ``Vary: Accept-Encoding``, and is
compressed when the header accepts gzip (RFC 9110 12.5.3: ``gzip`` or ``x-gzip`` with a
q-value above 0, or, unnamed, ``*`` above 0); a strong ``ETag`` then names the gzip
representation: the same tag with ``-gzip`` inside its quotes. HEAD is never compressed
(nothing is sent): it answers with the identity representation's length, and the same Vary.

Bodies that never change (the OpenAPI document, the docs page's files) are compressed once
(``keep``) and served from memory after; every other body is compressed per answer with
zlib (level 1, gzip framing, mtime 0: the same bytes every time; the kept ones at level 6).
"""

from __future__ import annotations

import zlib
from functools import lru_cache

from influencer_stats.http.problems import Reply

#: gzip's framing for ``zlib.compress`` (a header and CRC around the deflate stream).
_GZIP_WBITS = 31
#: zlib's fastest level for what is compressed per answer, on the event loop (a 70 KB body of ids:
#: level 6 takes about 3× the time for 9% fewer bytes; perf/RESULTS.md, "gzip, CORS and the access
#: log"); zlib's default for what is compressed once (``keep``).
_LEVEL = 1
_KEPT_LEVEL = 6
_ENCODED = ("content-encoding", "gzip")
#: Statuses whose answers carry no content to encode.
_BODILESS = frozenset({204, 304})
#: Bodies kept compressed (``keep``): the process's few constant answers, never a request's.
MAX_KEPT = 64


@lru_cache(maxsize=256)  # a client sends the same value each time: a handful of distinct ones
def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an ``Accept-Encoding`` value accepts gzip (RFC 9110 12.5.3).

    ``gzip`` (or its alias ``x-gzip``) named with a q-value above 0; else ``*`` with a q-value
    above 0. A malformed q-value counts as 0 (refuses). ``identity;q=0`` refuses only identity.
    """
    named: float | None = None
    anything: float | None = None
    for item in accept_encoding.split(","):
        coding, _, parameters = item.partition(";")
        coding = coding.strip().lower()
        quality = 1.0
        for parameter in parameters.split(";"):
            name, _, value = parameter.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value.strip())
                except ValueError:
                    quality = 0.0
                if not 0.0 <= quality <= 1.0:  # nan, inf, out of range: not a q-value
                    quality = 0.0
        if coding in ("gzip", "x-gzip"):
            named = quality if named is None else max(named, quality)
        elif coding == "*":
            anything = quality
    if named is not None:
        return named > 0
    return anything is not None and anything > 0


def with_vary(headers: tuple[tuple[str, str], ...], token: str) -> tuple[tuple[str, str], ...]:
    """``headers`` with ``token`` in their one ``Vary`` (some frameworks keep only the last of
    two lines of a header, so a second line would replace the first)."""
    for index, (name, value) in enumerate(headers):
        if name == "vary":
            merged = ("vary", f"{value}, {token}")
            return (*headers[:index], merged, *headers[index + 1 :])
    return (*headers, ("vary", token))


def _gzip(body: bytes, level: int = _LEVEL) -> bytes:
    return zlib.compress(body, level, wbits=_GZIP_WBITS)


def _gzip_tag(value: str) -> str:
    """The entity tag of the gzip representation: ``"x"`` → ``"x-gzip"`` (``W/"x"`` likewise)."""
    return value[:-1] + '-gzip"' if value.endswith('"') else value


class Gzip:
    """Compresses answers of at least ``min_bytes`` for clients that accept gzip (module doc)."""

    def __init__(self, min_bytes: int) -> None:
        self.min_bytes = min_bytes
        #: id(body) → (body, its gzip or None until first asked): only bodies given to ``keep``.
        self._kept: dict[int, tuple[bytes, bytes | None]] = {}

    def keep(self, body: bytes, *, now: bool = False) -> None:
        """Remember ``body`` (a constant of the process) to compress it once: ``now``, or when
        first asked. A body of fewer than ``min_bytes`` is never compressed, so not kept."""
        if len(body) < self.min_bytes or id(body) in self._kept:
            return
        assert len(self._kept) < MAX_KEPT, "keep is for the process's constant answers only"
        self._kept[id(body)] = (body, _gzip(body, _KEPT_LEVEL) if now else None)

    def _compressed(self, body: bytes) -> bytes:
        kept = self._kept.get(id(body))
        if kept is None or kept[0] is not body:
            return _gzip(body)
        if kept[1] is None:
            kept = (body, _gzip(body, _KEPT_LEVEL))
            self._kept[id(body)] = kept
        assert kept[1] is not None
        return kept[1]

    def encode(self, reply: Reply, method: str, accept_encoding: str | None) -> Reply:
        """``reply`` as it should be sent to a client that sent ``accept_encoding``.

        The caller tests ``len(reply.body) >= min_bytes`` first (the common small answer pays
        that test only).
        """
        status, body, content_type, headers = reply
        if status in _BODILESS or status < 200 or not _compressible(content_type):
            return reply
        if not _gzipped(reply, method, accept_encoding):
            return Reply(status, body, content_type, with_vary(headers, "accept-encoding"))
        encoded = (*with_vary(_gzip_tagged(headers), "accept-encoding"), _ENCODED)
        return Reply(status, self._compressed(body), content_type, encoded)

    def stand_in(self, answer: Reply, unchanged: Reply, method: str, accept_encoding: str | None) -> Reply:
        """The 304 ``unchanged`` standing for ``answer`` (of at least ``min_bytes``), with the
        ``Vary`` and the ``ETag`` that ``answer`` would have been sent with (RFC 9110 15.4.5): the
        gzip representation's tag to a client that accepts it, which is the tag it holds."""
        if not _compressible(answer.content_type):
            return unchanged
        headers = with_vary(unchanged.headers, "accept-encoding")
        if _gzipped(answer, method, accept_encoding):
            headers = _gzip_tagged(headers)
        return Reply(unchanged.status, unchanged.body, unchanged.content_type, headers)


def _compressible(content_type: str) -> bool:
    """Whether a body of this type is worth compressing: any but an image other than SVG (PNG is
    compressed already)."""
    return not content_type.startswith("image/") or "svg" in content_type


def _gzipped(reply: Reply, method: str, accept_encoding: str | None) -> bool:
    """Whether a large ``reply`` is sent gzipped: not to HEAD (nothing is sent), only to a client
    that accepts gzip, and never when it is encoded already."""
    return (
        method != "HEAD"
        and accept_encoding is not None
        and accepts_gzip(accept_encoding)
        and not any(name == "content-encoding" for name, _ in reply.headers)
    )


def _gzip_tagged(headers: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """``headers`` with their ``ETag`` naming the gzip representation."""
    return tuple((name, _gzip_tag(value)) if name == "etag" else (name, value) for name, value in headers)
