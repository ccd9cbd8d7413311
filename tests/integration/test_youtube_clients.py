"""The four real YouTube clients end to end, as a user runs them.

The service is the real process (``main.py --video-client <client> --logger all``)
with ``YOUTUBE_API_URL`` and ``YOUTUBE_API_KEY`` in its environment. Its upstream
is a YouTube double in a real container: the Python double
(``influencer_stats.testing.youtube_double``, with faults and call counters behind
``/_control/*``), or a real nginx serving pre-rendered ``videos.list`` answers.

One Python double container and one nginx container per module; one service
process per client for most tests (its circuit breaker threshold is raised, so
the error tests cannot open it by accident), and short-lived processes for the
circuit-breaker and nginx tests. The double is reset before every test.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from influencer_stats.interpreters.videos.synthetic import is_unknown, synthetic_stats, synthetic_video_id
from influencer_stats.logic.models import VideoId
from influencer_stats.testing.nginx_double import server_block, write_site
from influencer_stats.testing.youtube_double import VIDEOS_PATH
from tests.integration.containers import nginx_server, python_aiohttp_server, require_docker
from tests.support import ROOT, running_service

CLIENTS = ("httpx", "httpx-batched", "aiohttp", "aiohttp-batched")
API_KEY = "sk-test-7f3a9c"
IDS_PER_BATCH = 50  # Google's documented maximum of ids per videos.list call
HTTP_TIMEOUT_S = 10.0  # bounds every request the tests make

MISSING_ID = "Xdeleted_01"  # ids starting with X are missing in the synthetic world
KNOWN_IDS: list[str] = [synthetic_video_id(n) for n in range(120)]
# 121 ids; the missing one sits in the middle, so it lands inside a batch.
COLLECTION = [*KNOWN_IDS[:70], MISSING_ID, *KNOWN_IDS[70:]]


# --- What the service should do ----------------------------------------------------


def is_batched(client: str) -> bool:
    return client.endswith("-batched")


def distinct(ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def expected_calls(client: str, ids: Sequence[str]) -> list[list[str]]:
    """The ids of each videos.list call: the distinct ids in request order, 50 or 1 per call."""
    unique = distinct(ids)
    step = IDS_PER_BATCH if is_batched(client) else 1
    return [unique[i : i + step] for i in range(0, len(unique), step)]


def expected_stats(ids: Sequence[str]) -> dict[str, Any]:
    """The stats answer, computed independently from the synthetic statistics."""
    unique = distinct(ids)
    known = [synthetic_stats(VideoId(i)) for i in unique if not is_unknown(i)]
    engagements = sum(s.likes + s.comments + s.dislikes for s in known)
    return {
        "impressions": sum(s.views for s in known),
        "engagements": engagements,
        "score": engagements + sum(s.likes for s in known),
        "videos": len(known),
        "missing": [i for i in unique if is_unknown(i)],
    }


def one_call_of_ids(client: str) -> list[str]:
    """A collection the client fetches with exactly one videos.list call: a full batch, or one id."""
    return KNOWN_IDS[: IDS_PER_BATCH if is_batched(client) else 1]


# --- Talking to the service and to the double ----------------------------------------


@dataclass(frozen=True)
class Service:
    """A running service process and an HTTP client for it."""

    client: str
    http: httpx.Client
    log_path: Path

    def output(self) -> str:
        """Everything the process wrote (with ``--logger all``: every log line)."""
        return self.log_path.read_text(errors="replace")

    def put_collection(self, videos: Sequence[str]) -> str:
        collection_id = "c-" + uuid.uuid4().hex
        response = self.http.put(f"/collections/{collection_id}", json={"videos": list(videos)})
        assert response.status_code == 201, response.text
        return collection_id

    def stats_of(self, videos: Sequence[str]) -> httpx.Response:
        """PUT a new collection of ``videos``, then GET its stats."""
        return self.http.get(f"/collections/{self.put_collection(videos)}/stats")


@contextmanager
def started_service(client: str, log_dir: Path, api_url: str, **settings: str) -> Iterator[Service]:
    """``main.py --video-client CLIENT --logger all`` against ``api_url``, with the API key."""
    env = {"YOUTUBE_API_URL": api_url, "YOUTUBE_API_KEY": API_KEY, **settings}
    log_path = log_dir / "service.log"
    with (
        running_service(["--video-client", client, "--logger", "all"], log_path, env=env) as process,
        httpx.Client(base_url=process.url, timeout=HTTP_TIMEOUT_S) as http,
    ):
        yield Service(client, http, log_path)


@dataclass(frozen=True)
class YouTubeDouble:
    """The control API of the Python double (JSON shapes in youtube_double.py)."""

    base: str

    @property
    def videos_url(self) -> str:
        return self.base + VIDEOS_PATH

    def _post(self, path: str, payload: dict[str, Any] | None = None) -> None:
        response = httpx.post(self.base + path, json=payload, timeout=HTTP_TIMEOUT_S)
        assert response.status_code == 200, response.text

    def reset(self) -> None:
        self._post("/_control/reset")

    def fault(self, mode: str, **options: Any) -> None:
        """Apply a fault to the next ``count`` calls, or until changed without ``count``."""
        self._post("/_control/fault", {"mode": mode, **options})

    def counters(self) -> dict[str, Any]:
        response = httpx.get(self.base + "/_control/stats", timeout=HTTP_TIMEOUT_S)
        assert response.status_code == 200, response.text
        counters: dict[str, Any] = response.json()
        return counters


def assert_problem(response: httpx.Response, status: int) -> dict[str, Any]:
    """An RFC 9457 problem with this status that does not carry the API key."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert {"type", "title", "detail"} <= body.keys()
    assert API_KEY not in response.text
    return body


def nginx_template() -> str:
    """The nginx double's server block, listening on ``${NGINX_LISTEN}`` as containers.py asks."""
    block = server_block("${NGINX_PORT}")
    listen = "listen 127.0.0.1:${NGINX_PORT};"
    assert block.count(listen) == 1, "server_block's listen line changed"
    return block.replace(listen, "listen ${NGINX_LISTEN};")


# --- Fixtures ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def python_double() -> Iterator[YouTubeDouble]:
    """The Python YouTube double in a container; it answers only calls carrying the key."""
    require_docker()
    with python_aiohttp_server(
        package_dir=ROOT / "influencer_stats",
        module="influencer_stats.testing.youtube_double",
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
