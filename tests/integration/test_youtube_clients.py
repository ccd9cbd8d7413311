"""The four real YouTube clients end to end, as a user runs them.

The service is the real process (``main.py --video-client <client> --logger all``)
with ``YOUTUBE_API_URL`` and ``YOUTUBE_API_KEY`` in its environment. Its upstream
is a YouTube double in a real container: the Python double
(``youtube_double``, with faults and call counters behind
``/_control/*``), or a real nginx serving pre-rendered ``videos.list`` answers.

One Python double container and one nginx container per module; one service
process per client for most tests (its circuit breaker threshold is raised, so
the error tests cannot open it by accident), and short-lived processes for the
circuit-breaker and nginx tests. The double is reset before every test.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.containers import nginx_server, python_aiohttp_server, require_docker
from tests.integration.youtube_clients_support import (
    API_KEY,
    CLIENTS,
    COLLECTION,
    IDS_PER_BATCH,
    MISSING_ID,
    Service,
    YouTubeDouble,
    assert_problem,
    expected_calls,
    expected_stats,
    is_batched,
    nginx_template,
    one_call_of_ids,
    started_service,
)
from tests.support import ROOT
from youtube_double import VIDEOS_PATH
from youtube_double.nginx_double import write_site

# --- Fixtures ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def python_double() -> Iterator[YouTubeDouble]:
    """The Python YouTube double in a container; it answers only calls carrying the key."""
    require_docker()
    with python_aiohttp_server(
        package_dirs=[ROOT / "youtube_double", ROOT / "influencer_stats"],
        module="youtube_double",
        args=["--require-key", API_KEY],
        health_path="/healthz",
    ) as endpoint:
        yield YouTubeDouble(endpoint.url)


@pytest.fixture
def double(python_double: YouTubeDouble) -> YouTubeDouble:
    """The Python double with zeroed counters and no fault."""
    python_double.reset()
    return python_double


@pytest.fixture(scope="module", params=CLIENTS)
def service(
    request: pytest.FixtureRequest, python_double: YouTubeDouble, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Service]:
    """The service on one real client against the Python double; its breaker never opens here."""
    client: str = request.param
    with started_service(
        client,
        tmp_path_factory.mktemp(f"service-{client}"),
        python_double.videos_url,
        INFLUENCER_STATS_BREAKER_THRESHOLD="1000",
    ) as running:
        yield running


@pytest.fixture(scope="module")
def nginx_double_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real nginx in a container serving the answers to every call any client makes for COLLECTION."""
    require_docker()
    site = tmp_path_factory.mktemp("nginx-site")
    write_site(site, [group for client in CLIENTS for group in expected_calls(client, COLLECTION)])
    with nginx_server(site, nginx_template(), health_path="/healthz") as endpoint:
        yield endpoint.url + VIDEOS_PATH


# --- Statistics and call counts ---------------------------------------------------------


def test_stats_of_a_121_video_collection_are_the_exact_synthetic_sums(
    service: Service, double: YouTubeDouble
) -> None:
    response = service.stats_of(COLLECTION)

    assert response.status_code == 200, response.text
    body = response.json()
    assert body == expected_stats(COLLECTION)
    assert body["videos"] == 120
    assert body["missing"] == [MISSING_ID]


def test_per_video_clients_call_once_per_id_and_batched_clients_once_per_50_ids(
    service: Service, double: YouTubeDouble
) -> None:
    assert service.stats_of(COLLECTION).status_code == 200

    counters = double.counters()
    calls = expected_calls(service.client, COLLECTION)
    assert len(calls) == (3 if is_batched(service.client) else 121)
    assert counters["calls"] == len(calls)
    assert counters["ids_requested"] == 121
    assert counters["max_ids_in_call"] == (IDS_PER_BATCH if is_batched(service.client) else 1)
    if is_batched(service.client):  # concurrent calls arrive in any order
        assert sorted(counters["batches"]) == sorted(calls)


def test_a_collection_listing_ids_twice_still_calls_once_per_distinct_id(
    service: Service, double: YouTubeDouble
) -> None:
    twice = [*COLLECTION, *reversed(COLLECTION)]

    response = service.stats_of(twice)

    assert response.status_code == 200, response.text
    assert response.json() == expected_stats(COLLECTION)
    counters = double.counters()
    assert counters["calls"] == len(expected_calls(service.client, twice))
    assert counters["calls"] == (3 if is_batched(service.client) else 121)
    assert counters["ids_requested"] == 121


# --- Upstream errors --------------------------------------------------------------------


def test_an_exceeded_quota_answers_503_with_retry_after_and_is_never_retried(
    service: Service, double: YouTubeDouble
) -> None:
    double.fault("quota")

    response = service.stats_of(one_call_of_ids(service.client))

    body = assert_problem(response, 503)
    assert body["type"] == "urn:influencer-stats:problem:upstream-quota-exceeded"
    assert response.headers["retry-after"] == "3600"  # quotaExceeded: the daily quota
    assert double.counters()["calls"] == 1


def test_a_persistent_server_error_answers_502_after_two_retries(
    service: Service, double: YouTubeDouble
) -> None:
    double.fault("server_error")

    response = service.stats_of(one_call_of_ids(service.client))

    body = assert_problem(response, 502)
    assert body["type"] == "urn:influencer-stats:problem:upstream-unavailable"
    assert double.counters()["calls"] == 3  # 1 + 2 retries


@pytest.mark.parametrize(
    ("mode", "problem_type"),
    [
        ("malformed", "upstream-invalid-response"),
        ("bad_count", "upstream-invalid-response"),
        ("bad_key", "upstream-misconfigured"),
    ],
)
def test_an_unusable_upstream_answer_is_a_502_without_retry(
    service: Service, double: YouTubeDouble, mode: str, problem_type: str
) -> None:
    double.fault(mode)

    response = service.stats_of(one_call_of_ids(service.client))

    body = assert_problem(response, 502)
    assert body["type"] == f"urn:influencer-stats:problem:{problem_type}"
    assert double.counters()["calls"] == 1


def test_a_stalled_upstream_answers_504_within_3_s_and_the_next_request_succeeds(
    service: Service, double: YouTubeDouble
) -> None:
    videos = one_call_of_ids(service.client)
    collection_id = service.put_collection(videos)
    double.fault("stall", stall_seconds=5)

    started = time.monotonic()
    stalled = service.http.get(f"/collections/{collection_id}/stats")
    elapsed = time.monotonic() - started

    body = assert_problem(stalled, 504)
    assert body["type"] == "urn:influencer-stats:problem:upstream-timeout"
    assert elapsed < 3.0, f"the 504 took {elapsed:.2f} s"

    double.fault("none")
    recovered = service.http.get(f"/collections/{collection_id}/stats")

    assert recovered.status_code == 200, recovered.text
    assert recovered.json() == expected_stats(videos)


# --- The API key ---------------------------------------------------------------------


def test_the_key_travels_only_in_the_header_and_never_reaches_logs_or_problems(
    service: Service, double: YouTubeDouble
) -> None:
    ok = service.stats_of(COLLECTION)
    double.fault("bad_key", count=1)
    rejected = service.stats_of(one_call_of_ids(service.client))
    double.fault("quota", count=1)
    over_quota = service.stats_of(one_call_of_ids(service.client))

    assert ok.status_code == 200, ok.text
    assert_problem(rejected, 502)
    assert_problem(over_quota, 503)
    counters = double.counters()
    assert counters["key_header_seen"] is True
    assert counters["key_in_query_seen"] is False
    output = service.output()
    # The log is really on: the events of these very requests are in it.
    assert '"stats.computed"' in output
    assert '"youtube.misconfigured"' in output
    assert '"stats.upstream_failed"' in output
    assert API_KEY not in output


# --- The circuit breaker -------------------------------------------------------------


@pytest.mark.parametrize("video_client", CLIENTS)
def test_after_two_failed_fetches_the_circuit_opens_and_fails_fast_without_calling_youtube(
    video_client: str, double: YouTubeDouble, tmp_path: Path
) -> None:
    videos = one_call_of_ids(video_client)
    # The cooldown outlasts the test: the circuit stays open, nothing waits for it.
    with started_service(
        video_client,
        tmp_path,
        double.videos_url,
        INFLUENCER_STATS_BREAKER_THRESHOLD="2",
        INFLUENCER_STATS_BREAKER_COOLDOWN="600",
    ) as service:
        collection_id = service.put_collection(videos)
        double.fault("server_error")
        failures = [service.http.get(f"/collections/{collection_id}/stats") for _ in range(2)]
        calls_before = double.counters()["calls"]
        fast = service.http.get(f"/collections/{collection_id}/stats")
        calls_after = double.counters()["calls"]
        output = service.output()

    for failure in failures:
        assert_problem(failure, 502)
    assert calls_before == 6  # two fetches of 1 + 2 retries each
    body = assert_problem(fast, 502)
    assert "circuit open" in body["detail"]
    assert calls_after == calls_before
    assert '"youtube.circuit_opened"' in output
    assert API_KEY not in output


# --- The nginx static double -----------------------------------------------------------


@pytest.mark.parametrize("video_client", CLIENTS)
def test_against_the_nginx_static_double_the_121_video_sums_are_the_same(
    video_client: str, nginx_double_url: str, tmp_path: Path
) -> None:
    with started_service(video_client, tmp_path, nginx_double_url) as service:
        response = service.stats_of(COLLECTION)
        output = service.output()

    assert response.status_code == 200, response.text
    body = response.json()
    assert body == expected_stats(COLLECTION)
    assert body["videos"] == 120
    assert body["missing"] == [MISSING_ID]
    assert API_KEY not in output
