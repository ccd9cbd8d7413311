"""The stats caches' choices resolved in-process (the ``stats_cache`` slice's part of test_config.py)."""

from __future__ import annotations

import pytest

from influencer_stats.config.resolve import ConfigError, resolve
from tests.support import SHARED_STORE, instead_of_slices

DOUBLE = {"YOUTUBE_API_URL": "http://127.0.0.1:9/youtube/v3/videos"}


def test_the_cache_slot_is_the_stats_query_s_wrapper_list() -> None:
    assert resolve({}, {"cache": "stats"}).choices["cache"] == ("stats",)
    assert resolve({}, {"cache": "none"}).choices["cache"] == ()
    assert resolve({}).choices.text("cache") == "none"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            {"store": SHARED_STORE, "cache": "stats"},
            "cache 'stats' keeps cached stats in each process: with --workers 2 use --cache redis, or none",
        ),
        (
            {"profile": "youtube", **instead_of_slices("youtube"), "store": SHARED_STORE},
            "cache 'stats' keeps cached stats in each process",
        ),
        ({"store": "redis", "cache": "redis,stats"}, "cache 'stats' keeps cached stats in each process"),
    ],
)
def test_several_workers_are_refused_where_stats_are_cached_per_process(
    flags: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        resolve(DOUBLE, {**flags, "workers": "2"})

    assert message in str(raised.value)
    assert resolve(DOUBLE, flags).workers == 1  # one process: the same choices are fine


@pytest.mark.parametrize(
    "flags",
    [
        {"store": SHARED_STORE, "cache": "redis"},
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
