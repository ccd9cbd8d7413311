"""perf/minimal.py for real: the same answers as the service, byte for byte, from the same double.

The lab's ``minimal`` reference is only a yardstick if it does the service's work:
both run here against the Python YouTube double, get the same collections, and
their stats answers are compared as bytes (no timing is asserted).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import httpx
import pytest

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from perf.workload import ORIGINAL_COLLECTION, ORIGINAL_VIDEOS
from tests.support import RunningService, profile_args, running_double_process, running_service

COLLECTIONS = {
    ORIGINAL_COLLECTION: [*ORIGINAL_VIDEOS, ORIGINAL_VIDEOS[0]],  # the lab's 3 videos, one listed twice
    "6f1c1f8e-5b0a-4b53-9d0c-6b7f2c1a9e01": [],
    # 60 distinct ids, one missing in the middle (ids starting with X are): two videos.list calls.
    "0a4e1c52-8d4b-4e43-9a55-0d2f1f1b8a11": [
        *(synthetic_video_id(n) for n in range(30)),
        "Xdeleted_01",
        *(synthetic_video_id(n) for n in range(30, 59)),
    ],
}


@pytest.fixture(scope="module")
def double_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_double_process(tmp_path_factory.mktemp("double") / "double.log") as url:
        yield url


def _env(double_url: str) -> dict[str, str]:
    return {"YOUTUBE_API_URL": double_url, "YOUTUBE_API_KEY": "perf-test-key"}


@pytest.fixture(scope="module")
def minimal(double_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningService]:
    log = tmp_path_factory.mktemp("minimal") / "minimal.log"
    with running_service(
        [], log, env=_env(double_url), command=[sys.executable, "-m", "perf.minimal"]
    ) as running:
        yield running


@pytest.fixture(scope="module")
def service(double_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningService]:
    log = tmp_path_factory.mktemp("service") / "service.log"
    args = [*profile_args("fast"), "--cache", "none"]
    env = {**_env(double_url), "INFLUENCER_STATS_QUOTA_PER_DAY": "0"}
    with running_service(args, log, env=env) as running:
        yield running


def _stats_after_seeding(url: str) -> dict[str, bytes]:
    with httpx.Client(base_url=url, timeout=10) as client:
        for collection, videos in COLLECTIONS.items():
            response = client.put(f"/collections/{collection}", json={"videos": videos})
            assert response.is_success, response.text
        answers = {}
        for collection in COLLECTIONS:
            response = client.get(f"/collections/{collection}/stats")
            assert response.status_code == 200, response.text
            assert response.headers["content-type"] == "application/json"
            answers[collection] = response.content
        return answers


def test_minimal_answers_the_services_stats_byte_for_byte(
    minimal: RunningService, service: RunningService
) -> None:
    expected = _stats_after_seeding(service.url)

    assert _stats_after_seeding(minimal.url) == expected
    assert expected[ORIGINAL_COLLECTION] == (
        b'{"impressions":18760776,"engagements":383586,"score":710585,"videos":3,"missing":[]}'
    )
    assert b'"missing":["Xdeleted_01"]' in expected["0a4e1c52-8d4b-4e43-9a55-0d2f1f1b8a11"]


def test_minimal_answers_what_http_needs_and_no_more(minimal: RunningService) -> None:
    with httpx.Client(base_url=minimal.url, timeout=10) as client:
        assert client.get("/collections/no-such-collection/stats").status_code == 404
        assert client.put("/collections/c", content=b"not json").status_code == 400
        assert client.delete(f"/collections/{ORIGINAL_COLLECTION}").status_code == 405
        assert client.get("/elsewhere").status_code == 404
        # No validation of ids: anything goes in, as sent.
        assert client.put("/collections/not-a-uuid", json={"videos": ["?"]}).json() == {"videos": ["?"]}


def test_the_logs_stay_quiet(minimal: RunningService) -> None:
    assert "Traceback" not in minimal.output()
