"""What the video cache gives a request that times out (issue 22), on every server: real service
processes, real sockets, the YouTube double as its own process.

A request that times out (a slow YouTube) pays each call once: the calls go on, fill the video
cache, and asking again while they are out waits for them (five asks paid 500 units for 100
before). Without a video cache each ask makes its own calls: this is the video cache slice's.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.integration.test_hardening_upstream import PROBLEM, calls_made, new_videos, youtube_env
from tests.support import (
    SERVERS,
    expected_stats,
    profile_args,
    running_double_process,
    running_service,
    wait_for,
)


@pytest.mark.parametrize("server", SERVERS)
def test_a_request_that_times_out_pays_each_call_once_and_its_calls_fill_the_cache(
    server: str, tmp_path: Path
) -> None:
    # 100 calls, 16 at once, 500 ms each: about 3.1 s of calls for a 2 s deadline.
    with (
        running_double_process(tmp_path / "double.log", latency_ms=500) as double,
        running_service(
            [*profile_args("youtube"), "--server", server],
            tmp_path / "service.log",
            env=youtube_env(double, INFLUENCER_STATS_UPSTREAM_CONNECTIONS="16"),
        ) as service,
        httpx.Client(base_url=service.url, timeout=30) as client,
    ):
        videos = new_videos(0)
        assert client.put("/collections/big", json={"videos": videos}).status_code == 201
        first = client.get("/collections/big/stats")
        again = client.get("/collections/big/stats")  # at once: the calls are still out
        assert wait_for(lambda: calls_made(double) >= 100, 10)
        third = client.get("/collections/big/stats")
        spent = calls_made(double)

    assert (first.status_code, first.json()["type"]) == (504, PROBLEM + "upstream-timeout")
    assert again.status_code == 200  # waited for the first request's calls
    assert third.status_code == 200 and third.json() == expected_stats(videos)
    assert spent == 100  # 5,000 ids in calls of 50, each paid once
