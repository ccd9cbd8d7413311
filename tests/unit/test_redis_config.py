"""The ``redis`` slice's store as config resolves it (its part of test_config.py): shared by every
worker, so several workers may keep their collections there, whatever else the profile runs."""

from __future__ import annotations

from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.config.resolve import resolve
from tests.support import A_YOUTUBE_CLIENT

DOUBLE = {"YOUTUBE_API_URL": "http://127.0.0.1:9/youtube/v3/videos"}
CORE = {"server": "starlette", "cache": "none", "video_client": A_YOUTUBE_CLIENT}


def test_several_workers_may_share_the_redis_store() -> None:
    flags = {"profile": "fast", **CORE, "video_client": "fake", "store": "redis"}

    assert resolve({**DOUBLE, "INFLUENCER_STATS_WORKERS": "4"}, flags).workers == 4


def test_the_redis_store_declares_the_server_it_needs_and_its_readiness_check() -> None:
    entry = SLOTS["store"].registry["redis"]

    assert entry.needs == ("redis",) and entry.ready == ("redis",)
    assert entry.shared and entry.bumps_versions and entry.per_process is None
