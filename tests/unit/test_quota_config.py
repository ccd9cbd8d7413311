"""The ``quota`` slice's choices as config resolves them: ``memory`` the default while installed,
refused with several workers only for a client that spends the budget."""

from __future__ import annotations

import pytest

from influencer_stats.config.resolve import ConfigError, resolve
from tests.support import YOUTUBE_CLIENTS

DOUBLE = {"YOUTUBE_API_URL": "http://127.0.0.1:9/youtube/v3/videos"}


def test_the_in_process_count_is_the_default_while_the_slice_is_installed() -> None:
    assert resolve(DOUBLE, {}).choices.one("quota") == "memory"
    assert resolve(DOUBLE, {"quota": "none"}).choices.one("quota") == "none"


def test_several_workers_counting_quota_each_are_refused_only_for_a_client_that_spends_it() -> None:
    # ``spends_quota`` on the video client's entry, not its name, says whether N workers could
    # spend N budgets with the ``memory`` ledger.
    flags = {"video_client": YOUTUBE_CLIENTS[0], "store": "sqlite", "cache": "none", "workers": "2"}
    with pytest.raises(ConfigError) as raised:
        resolve(DOUBLE, flags)

    assert "counts quota units in each process: with --workers 2 use --quota redis" in str(raised.value)
    assert resolve(DOUBLE, {**flags, "video_client": "fake"}).workers == 2
    assert resolve(DOUBLE, {**flags, "quota": "redis"}).workers == 2
    assert resolve({**DOUBLE, "INFLUENCER_STATS_QUOTA_PER_DAY": "0"}, flags).workers == 2
