"""A collection's source as the SQLite and Redis interpreters write it: ``<kind>:<id>``, or its
kind and id apart."""

from __future__ import annotations

from typing import Final, get_args

from influencer_stats.domain.models import CollectionSource, SourceKind

KINDS: Final[tuple[SourceKind, ...]] = get_args(SourceKind)


def source_text(source: CollectionSource) -> str:
    """``playlist:PL…`` or ``channel:UC…``: the kind has no colon, so the id may hold any."""
    return f"{source.kind}:{source.id}"


def parse_source(text: str) -> CollectionSource:
    """What ``source_text`` wrote; raises ``ValueError`` for anything else (a bug, not a fault)."""
    kind, _, source_id = text.partition(":")
    return source_of(kind, source_id)


def source_of(kind: str, source_id: str) -> CollectionSource:
    """The source of ``kind`` (checked: one of ``KINDS``) and ``source_id``."""
    for known in KINDS:
        if kind == known:
            return CollectionSource(known, source_id)
    raise ValueError(f"not a kind of collection source: {kind[:20]!r}")
