"""The core's ``tracing`` slot without the slice: ``none`` builds nothing and every place the root
traces gets back what it gave (no layer, no per-request cost)."""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any, cast

from influencer_stats.bootstrap.tracing import NO_TRACING, TRACING
from influencer_stats.bootstrap.wiring import Resources
from influencer_stats.config.resolve import resolve


async def test_none_is_the_default_and_builds_the_tracing_that_builds_nothing() -> None:
    settings = resolve({})
    async with AsyncExitStack() as exits:
        resources = Resources(settings, exits, {}, cast(Any, None))
        assert resources.tracing is NO_TRACING  # before the root's first step too

        built = await TRACING[settings.choices.one("tracing")].build(resources)

    assert settings.choices.one("tracing") == "none"
    assert built is NO_TRACING


def test_without_tracing_every_place_gets_what_it_gave_and_clients_their_defaults() -> None:
    stats, source, call, client = (cast(Any, object()) for _ in range(4))

    assert NO_TRACING.requests() is None  # the edge builds no tracing path
    assert NO_TRACING.stats(stats, cached=True) is stats
    assert NO_TRACING.source(source, cached=False) is source
    assert NO_TRACING.call(call) is call
    assert NO_TRACING.spans() is None  # a slice builds no traced layer of its own
    assert NO_TRACING.redis(client) is client
    assert NO_TRACING.httpx_hooks() is None
    assert NO_TRACING.aiohttp_trace_configs() is None
