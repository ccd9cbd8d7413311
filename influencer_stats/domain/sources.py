"""Validation of a PUT naming where to read a collection from: ``{"playlist": "<id>"}`` or
``{"channel": "<id>"}`` (the ``sources`` slice's body; a list of ids is the core's), and a
source as the stores that keep it write it: ``<kind>:<id>``, or its kind and id apart."""

from __future__ import annotations

import re
from typing import Final, TypeGuard, get_args

from returns.result import Failure, Result, Success

from influencer_stats.domain.models import CollectionSource, SourceKind
from influencer_stats.domain.validation import InvalidInput, clip

#: The keys that name a source; a PUT body with one of them is this slice's.
KINDS: Final = ("playlist", "channel")
# Playlist ids are a two-letter kind (PL, UU, OL …) and up to 32 more; a channel's is UC and 22.
_SOURCE_IDS = {
    "playlist": (re.compile(r"[A-Za-z0-9_-]{2,64}"), "must be 2-64 characters of A-Z a-z 0-9 _ -"),
    "channel": (re.compile(r"UC[A-Za-z0-9_-]{22}"), "must be UC and 22 characters of A-Z a-z 0-9 _ -"),
}


def names_a_source(document: object) -> TypeGuard[dict[str, object]]:
    """Whether a PUT body is one naming a source (an object with a key of ``KINDS``)."""
    return isinstance(document, dict) and any(kind in document for kind in KINDS)


def parse_source_body(document: dict[str, object]) -> Result[CollectionSource, InvalidInput]:
    """Exactly ``{"playlist": "<id>"}`` or ``{"channel": "<id>"}``: where to read the videos from."""
    kind = next(key for key in KINDS if key in document)
    extra = sorted(key for key in document if key != kind)
    if extra:
        return Failure(InvalidInput(extra[0], clip(document[extra[0]]), f"is not allowed beside {kind!r}"))
    value = document[kind]
    pattern, rule = _SOURCE_IDS[kind]
    if not isinstance(value, str) or not pattern.fullmatch(value):
        return Failure(InvalidInput(kind, clip(value), rule))
    return Success(CollectionSource("playlist" if kind == "playlist" else "channel", value))


def source_text(source: CollectionSource) -> str:
    """``playlist:PL…`` or ``channel:UC…``: the kind has no colon, so the id may hold any."""
    return f"{source.kind}:{source.id}"


def parse_source(text: str) -> CollectionSource:
    """What ``source_text`` wrote; raises ``ValueError`` for anything else (a bug, not a fault)."""
    kind, _, source_id = text.partition(":")
    return source_of(kind, source_id)


def source_of(kind: str, source_id: str) -> CollectionSource:
    """The source of ``kind`` (checked: a ``SourceKind``) and ``source_id``."""
    for known in get_args(SourceKind):
        if kind == known:
            return CollectionSource(known, source_id)
    raise ValueError(f"not a kind of collection source: {kind[:20]!r}")
