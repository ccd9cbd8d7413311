"""A count of 2^64 from YouTube is invalid upstream data on every server, and is not cached.

It was a 500 on every server (the sums were computed, and the JSON encoder refused
integers of 2^64 or more), and the stats cache kept the value, so every answer for
the next ~10 s was that 500 again. Now the parser refuses any count of 10^12 or more
(``youtube_api.MAX_COUNT``): the answer is a 502 ``upstream-invalid-response``,
nothing is cached, and the first answer after YouTube sends sane counts again is a
fresh 200.

The service is the real process on each server with the stats cache on (``--profile
demo --video-client A_YOUTUBE_CLIENT --cache stats``: batched when installed), pointed at the YouTube double in
its own process, whose ``bad_count`` fault puts the value into the first item's
``viewCount``.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from influencer_stats.bootstrap.videos import batches
from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from tests.integration.youtube_clients_support import HTTP_TIMEOUT_S, YouTubeDouble
from tests.support import (
    A_YOUTUBE_CLIENT,
    SERVERS,
    RunningService,
    expected_stats,
    running_double_process,
    running_service,
)
from youtube_double import VIDEOS_PATH

TWO_TO_THE_64 = str(2**64)  # "18446744073709551616"
VIDEOS = [synthetic_video_id(n) for n in range(3 if batches(A_YOUTUBE_CLIENT) else 1)]  # one videos.list call


@pytest.fixture(scope="module")
def youtube(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, YouTubeDouble]]:
    """The double as its own process: its videos.list URL and its control API."""
    with running_double_process(tmp_path_factory.mktemp("double") / "double.log") as url:
        yield url, YouTubeDouble(url.removesuffix(VIDEOS_PATH))


@pytest.fixture(scope="module", params=SERVERS)
def service(
    request: pytest.FixtureRequest,
    youtube: tuple[str, YouTubeDouble],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[RunningService]:
    args = ["--profile", "demo", "--server", request.param, "--video-client", A_YOUTUBE_CLIENT]
    log = tmp_path_factory.mktemp(f"service-{request.param}") / "service.log"
    with running_service([*args, "--cache", "stats"], log, env={"YOUTUBE_API_URL": youtube[0]}) as running:
        yield running


def test_a_count_of_2_to_the_64_is_a_502_invalid_response_and_the_next_answer_after_it_is_a_fresh_200(
    service: RunningService, youtube: tuple[str, YouTubeDouble]
) -> None:
    double = youtube[1]
    double.reset()
    double.fault("bad_count", bad_value=TWO_TO_THE_64)  # until changed
    with httpx.Client(base_url=service.url, timeout=HTTP_TIMEOUT_S) as http:
        assert http.put("/collections/huge", json={"videos": VIDEOS}).status_code in (200, 201)

        invalid = [http.get("/collections/huge/stats") for _ in range(2)]
        calls_while_invalid = double.counters()["calls"]
        double.fault("none")
        fresh = http.get("/collections/huge/stats")
        cached = http.get("/collections/huge/stats")

    for response in invalid:
        assert response.status_code == 502, response.text
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["type"] == "urn:influencer-stats:problem:upstream-invalid-response"
        assert "cache-status" not in response.headers
    assert calls_while_invalid == 2  # the error was not cached: the second request asked again
    assert fresh.status_code == 200, fresh.text
    assert fresh.json() == expected_stats(VIDEOS)
    assert fresh.headers["cache-status"] == "influencer-stats; fwd=miss; stored"
    assert cached.status_code == 200
    assert cached.json() == expected_stats(VIDEOS)
    assert "; hit; " in cached.headers["cache-status"]
    output = service.output()
    assert "Traceback" not in output
    assert "internal-error" not in output
