"""The per-video cache for a fetch the quota says would be refused (a client seen past its share):
no call is started for it, what is held or already being called for is served. A fake clock and a
scripted inner source: no sleeps."""

from __future__ import annotations

import asyncio

from returns.result import Failure

from influencer_stats.domain.models import ShareSpent, UpstreamError
from influencer_stats.interpreters.video_cache.video_entries import MemoryVideoEntries
from influencer_stats.interpreters.videos.synthetic import synthetic_stats
from influencer_stats.testing.clock import ManualClock as Clock
from tests.unit.test_video_cache import A, B, C, Inner, assemble, settle


async def test_a_fetch_known_refused_starts_no_call_but_is_served_what_is_held_or_in_flight() -> None:
    inner, clock = Inner(), Clock()
    refusal: list[UpstreamError] = []  # what the quota says of the client asking (its share)
    cache = assemble(inner, MemoryVideoEntries(100), clock, refused=lambda: refusal[0] if refusal else None)
    await cache.fetch([A])
    inner.gate.clear()
    others = asyncio.create_task(cache.fetch([C]))  # another client's call, held back
    await settle()
    spent = ShareSpent("share spent", retry_after_s=60)
    refusal.append(spent)

    clock.now += 10_000  # A is far past every window
    held = await cache.fetch([A])
    never_fetched = await cache.fetch([A, B])
    riding = asyncio.create_task(cache.fetch([C]))  # being called for already: it waits for it
    await settle()
    inner.gate.set()

    assert inner.fetches == [(A,), (C,)]  # no call started for the refused client
    info = held.unwrap().cache
    assert held.unwrap().stats == {A: synthetic_stats(A)}
    assert info is not None and info.stale_reason == "quota-exhausted"
    assert never_fetched == Failure(spent)
    assert (await riding).unwrap().stats == (await others).unwrap().stats == {C: synthetic_stats(C)}
