"""The core's ``none`` quota (``bootstrap/quota.py``): what the root and the slices ask of the day's
budget when nothing counts it answers with what it was given, and builds nothing."""

from __future__ import annotations

import io
from collections.abc import Sequence

from returns.result import Result, Success

from influencer_stats.bootstrap.quota import NO_QUOTA
from influencer_stats.bootstrap.root import open_wiring
from influencer_stats.config.resolve import resolve
from influencer_stats.domain.models import StatsByVideo, UpstreamError, VideoId

DOUBLE = {"YOUTUBE_API_URL": "http://127.0.0.1:9/youtube/v3/videos"}


async def _call(ids: Sequence[VideoId]) -> Result[StatsByVideo, UpstreamError]:
    return Success({})


async def test_no_budget_spends_nothing_stretches_nothing_and_builds_no_layer() -> None:
    settings = resolve(DOUBLE, {"quota": "none", "logger": "silent", "metrics": "none"})
    async with open_wiring(settings, io.BytesIO()) as wiring:
        quota = wiring.quota

        assert quota is NO_QUOTA  # whatever INFLUENCER_STATS_QUOTA_PER_DAY says
        assert await quota.governed(wiring, _call) is _call
        assert await quota.spender(wiring) is None
        assert (quota.units(), quota.short(), quota.stretch()) == (None, False, 1.0)
