"""The in-process collection sources: no source is ever dropped to make room, only claims are."""

from __future__ import annotations

import pytest
from returns.result import Success

from influencer_stats.domain.models import CollectionId, CollectionSource, KeptSource, Revision
from influencer_stats.domain.sources import parse_source, source_text
from influencer_stats.interpreters.sources.memory import MemoryCollectionSources

A, B, C = CollectionId("a"), CollectionId("b"), CollectionId("c")


async def test_past_the_claims_bound_every_source_is_kept_and_the_least_recent_claim_goes() -> None:
    sources = MemoryCollectionSources(max_claims=2)
    for collection in (A, B, C):
        await sources.put(
            collection, KeptSource(CollectionSource("channel", f"UC{collection}"), Revision("r"))
        )
    await sources.claim(A, 1)
    await sources.claim(B, 1)
    await sources.claim(A, 2)  # A is now the most recent

    await sources.claim(C, 1)

    for collection in (A, B, C):
        kept = KeptSource(CollectionSource("channel", f"UC{collection}"), Revision("r"))
        assert await sources.get(collection) == Success(kept)
    assert await sources.claim(A, 2) == Success(False)
    assert await sources.claim(B, 1) == Success(True)  # forgotten: claimed again


def test_a_source_written_as_text_reads_back_and_other_text_is_refused() -> None:
    for source in (CollectionSource("playlist", "PL:x"), CollectionSource("channel", "")):
        assert parse_source(source_text(source)) == source

    with pytest.raises(ValueError, match="not a kind of collection source"):
        parse_source("video:abc")
