"""The SourceReader contract's quota part, against every YouTube reader (the ``sources`` and the
``quota`` slices' both: it goes with the first removed): each call spends a unit of the day's
budget (4 here), none is made past it, and a read the budget left cannot finish stops after its
first page."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from returns.result import Success

from influencer_stats.domain.models import CollectionSource, QuotaExhausted
from tests.contract.test_source_reader import CHANNEL, YOUTUBE_READERS, World, _world


@pytest.fixture(params=YOUTUBE_READERS, ids=["+".join(p) for p in YOUTUBE_READERS])
async def youtube(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[World]:
    environ = {"INFLUENCER_STATS_QUOTA_PER_DAY": "4", "INFLUENCER_STATS_UPSTREAM_TIMEOUT": "0.3"}
    reader, client = request.param
    async for built in _world(tmp_path, reader, client, environ):
        yield built


async def test_each_call_spends_a_unit_and_none_is_made_past_the_budget(youtube: World) -> None:
    channel, playlist = CollectionSource("channel", CHANNEL), CollectionSource("playlist", "PLcontract120")
    await youtube.define(channel, playlist)

    assert isinstance(await youtube.reader.videos(channel, 5_000), Success)  # a channel call and 2 pages
    refused = await youtube.reader.videos(playlist, 5_000)  # 1 unit left of 4: 1 page of 3

    assert isinstance(refused.failure(), QuotaExhausted)
    assert youtube.calls() == 4


async def test_a_read_the_budget_left_cannot_finish_stops_after_its_first_page(youtube: World) -> None:
    source = CollectionSource("playlist", "PLcontract250")  # 5 pages; 3 units left after the first
    await youtube.define(source)

    refused = await youtube.reader.videos(source, 5_000)

    assert isinstance(refused.failure(), QuotaExhausted), refused
    assert youtube.calls() == 1
