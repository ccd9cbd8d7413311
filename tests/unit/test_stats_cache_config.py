"""The stats caches' choices resolved in-process (the ``stats_cache`` slice's part of test_config.py;
its caches on Redis: ``test_stats_cache_redis_config.py``, the joint with the ``redis`` slice)."""

from __future__ import annotations

import pytest

from influencer_stats.config.resolve import ConfigError, resolve
from tests.support import SHARED_STORE, instead_of_slices

DOUBLE = {"YOUTUBE_API_URL": "http://127.0.0.1:9/youtube/v3/videos"}

#: Several workers over a store they share (none without the sqlite and redis slices).
REFUSED_PER_PROCESS = (
    []
    if SHARED_STORE is None
    else [
        (
            {"store": SHARED_STORE, "cache": "stats"},
            "cache 'stats' keeps cached stats in each process: with --workers 2 use --cache redis, or none",
        ),
        (
            {"profile": "youtube", **instead_of_slices("youtube"), "store": SHARED_STORE},
            "cache 'stats' keeps cached stats in each process",
        ),
    ]
)


def test_the_cache_slot_is_the_stats_query_s_wrapper_list() -> None:
    assert resolve({}, {"cache": "stats"}).choices["cache"] == ("stats",)
    assert resolve({}, {"cache": "none"}).choices["cache"] == ()
    assert resolve({}).choices.text("cache") == "none"


if REFUSED_PER_PROCESS:  # defined only where it can run: no store workers share, no such case

    @pytest.mark.parametrize(("flags", "message"), REFUSED_PER_PROCESS)
    def test_several_workers_are_refused_where_stats_are_cached_per_process(
        flags: dict[str, str], message: str
    ) -> None:
        with pytest.raises(ConfigError) as raised:
            resolve(DOUBLE, {**flags, "workers": "2"})

        assert message in str(raised.value)
        assert resolve(DOUBLE, flags).workers == 1  # one process: the same choices are fine
