"""The stats caches on Redis resolved in-process (the joint ``redis__stats_cache``'s part of
test_stats_cache_config.py)."""

from __future__ import annotations

import pytest

from influencer_stats.config.resolve import ConfigError, resolve
from tests.support import SHARED_STORE, instead_of_slices

DOUBLE = {"YOUTUBE_API_URL": "http://127.0.0.1:9/youtube/v3/videos"}


def test_a_per_process_cache_under_the_redis_one_still_refuses_several_workers() -> None:
    flags = {"store": "redis", "cache": "redis,stats"}
    with pytest.raises(ConfigError) as raised:
        resolve(DOUBLE, {**flags, "workers": "2"})

    assert "cache 'stats' keeps cached stats in each process" in str(raised.value)
    assert resolve(DOUBLE, flags).workers == 1  # one process: the same choices are fine


@pytest.mark.parametrize(
    "flags",
    [
        {"store": SHARED_STORE or "redis", "cache": "redis"},
        {
            "profile": "fast",
            "server": "starlette",
            "video_client": "fake",
            "store": "redis",
            "cache": "redis",
        },
        {"profile": "distributed", **instead_of_slices("distributed")},
    ],
)
def test_several_workers_are_allowed_over_the_shared_stats_caches(flags: dict[str, str]) -> None:
    assert resolve({**DOUBLE, "INFLUENCER_STATS_WORKERS": "4"}, flags).workers == 4


def test_the_near_cache_over_tls_is_refused_for_its_plain_tracking_connection() -> None:
    with pytest.raises(ConfigError, match="cache 'near' reads Redis's invalidations on a plain connection"):
        resolve({"REDIS_URL": "rediss://redis.example:6380/0"}, {"cache": "near,redis"})

    assert resolve({}, {"cache": "near,redis"}).choices["cache"] == ("near", "redis")
