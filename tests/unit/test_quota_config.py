"""The ``quota`` slice's choices as config resolves them and the root builds them: ``memory`` the
default while installed, refused with several workers only for a client that spends the budget;
one spender per process, under which each ``videos.list`` call is governed."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import pytest
from returns.result import Result, Success

from influencer_stats.bootstrap.quota import NO_QUOTA, QUOTAS
from influencer_stats.bootstrap.root import open_wiring
from influencer_stats.config.resolve import ConfigError, resolve
from influencer_stats.domain.models import StatsByVideo, UpstreamError, VideoId
from influencer_stats.interpreters.quota.quota import QuotaGovernor
from tests.declared_paths import redirected_paths
from tests.support import SHARED_STORE, YOUTUBE_CLIENTS

DOUBLE = {"YOUTUBE_API_URL": "http://127.0.0.1:9/youtube/v3/videos"}


async def _call(ids: Sequence[VideoId]) -> Result[StatsByVideo, UpstreamError]:
    return Success({})


def test_the_in_process_count_is_the_default_while_the_slice_is_installed() -> None:
    assert resolve(DOUBLE, {}).choices.one("quota") == "memory"
    assert resolve(DOUBLE, {"quota": "none"}).choices.one("quota") == "none"


if SHARED_STORE is not None:  # several workers need a store they share (the sqlite or redis slice)

    def test_several_workers_counting_quota_each_are_refused_only_for_a_client_that_spends_it() -> None:
        # ``spends_quota`` on the video client's entry, not its name, says whether N workers could
        # spend N budgets with the ``memory`` ledger (with Redis: test_quota_redis_config.py).
        flags = {
            "video_client": YOUTUBE_CLIENTS[0],
            "store": SHARED_STORE,
            "cache": "none",
            "workers": "2",
            "quota": "memory",
        }
        with pytest.raises(ConfigError) as raised:
            resolve(DOUBLE, flags)

        # It names the installed counts every worker shares (``Entry.shared``), else one worker.
        shared = [entry.name for entry in QUOTAS if entry.shared]
        instead = f"--quota {' or '.join(shared)}" if shared else "--workers 1"
        assert f"counts quota units in each process: with --workers 2 use {instead}" in str(raised.value)
        assert resolve(DOUBLE, {**flags, "video_client": "fake"}).workers == 2
        assert resolve({**DOUBLE, "INFLUENCER_STATS_QUOTA_PER_DAY": "0"}, flags).workers == 2


async def test_a_counted_quota_is_built_once_per_process_and_governs_each_call(tmp_path: Path) -> None:
    # Every file a choice writes in a folder of its own: a count kept in a file starts from nothing;
    # the quota alone: no client's share around it (the shares slice's, where installed).
    environ = {
        **DOUBLE,
        **redirected_paths(tmp_path),
        "INFLUENCER_STATS_QUOTA_PER_DAY": "2",
        "INFLUENCER_STATS_SHARES": "none",
    }
    settings = resolve(environ, {"logger": "silent", "metrics": "none"})
    async with open_wiring(settings, io.BytesIO()) as wiring:
        spender = await wiring.quota.spender(wiring)

        assert spender is not None and await wiring.quota.spender(wiring) is spender
        assert wiring.quota.units() == 2
        assert isinstance(await wiring.quota.governed(wiring, _call), QuotaGovernor)
        assert [await spender.spend() is None for _ in range(3)] == [True, True, False]


async def test_no_budget_counts_nothing_whatever_the_ledger(tmp_path: Path) -> None:
    environ = {**DOUBLE, **redirected_paths(tmp_path), "INFLUENCER_STATS_QUOTA_PER_DAY": "0"}
    async with open_wiring(resolve(environ, {"logger": "silent", "metrics": "none"}), io.BytesIO()) as wiring:
        assert wiring.quota is NO_QUOTA
