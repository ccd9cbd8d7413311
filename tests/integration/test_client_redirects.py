"""No YouTube client follows a redirect, so the API key never reaches another server.

``videos.list`` does not redirect: a 3xx means ``YOUTUBE_API_URL`` names something
else. aiohttp followed redirects by default and sent ``X-Goog-Api-Key`` to the
``Location`` (a second server received the key, and the service answered 200 with
every video "missing"). Every client now takes the 3xx as the answer: a 502
``upstream-misconfigured`` problem, not retried, the key sent to the configured URL
only.

The service is the real process on each of the four clients. Its upstream is a small
server on 127.0.0.1 that answers every call with a redirect to a second one (another
port, so another origin) that would answer 200 with no items; both record each call
and the key it carried.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from tests.support import YOUTUBE_CLIENTS, RunningService, running_service

CLIENTS = YOUTUBE_CLIENTS
REDIRECTS = (301, 302, 303, 307, 308)
API_KEY = "sk-redirect-test-5d1e"
VIDEOS_PATH = "/youtube/v3/videos"
NO_ITEMS = b'{"kind": "youtube#videoListResponse", "items": []}'
HTTP_TIMEOUT_S = 10.0


@dataclass
class Recorder:
    """The calls one server received, as the ``X-Goog-Api-Key`` each carried (None: none)."""

    keys: list[str | None] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, key: str | None) -> None:
        with self.lock:
            self.keys.append(key)

    def seen(self) -> list[str | None]:
        with self.lock:
            return list(self.keys)

    def reset(self) -> None:
        with self.lock:
            self.keys.clear()


@dataclass
class Upstream:
    """The redirecting server (the service's ``YOUTUBE_API_URL``) and the redirect's target."""

    videos_url: str
    target_port: int
    redirector: Recorder
    target: Recorder
    status: list[int]  # the status the redirector answers with now: one element, set per test

    def reset(self, status: int) -> None:
        self.redirector.reset()
        self.target.reset()
        self.status[:] = [status]


def _handler(recorder: Recorder, answer: Callable[[str], tuple[int, dict[str, str], bytes]]) -> type:
    """A request handler that records each GET's key, then sends ``answer(path)``."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            recorder.record(self.headers.get("X-Goog-Api-Key"))
            status, headers, body = answer(self.path)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


@contextmanager
def serving(handler: type) -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    redirector, target, status = Recorder(), Recorder(), [302]

    def no_items(_: str) -> tuple[int, dict[str, str], bytes]:
        return 200, {"Content-Type": "application/json"}, NO_ITEMS

    with serving(_handler(target, no_items)) as target_server:
        target_port = target_server.server_address[1]

        def redirect(path: str) -> tuple[int, dict[str, str], bytes]:
            return status[0], {"Location": f"http://127.0.0.1:{target_port}{path}"}, b""

        with serving(_handler(redirector, redirect)) as redirect_server:
            videos_url = f"http://127.0.0.1:{redirect_server.server_address[1]}{VIDEOS_PATH}"
            yield Upstream(videos_url, target_port, redirector, target, status)


@pytest.fixture(scope="module", params=CLIENTS)
def service(
    request: pytest.FixtureRequest, upstream: Upstream, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningService]:
    """The service on one real client whose YOUTUBE_API_URL redirects; its breaker stays closed."""
    env = {
        "YOUTUBE_API_URL": upstream.videos_url,
        "YOUTUBE_API_KEY": API_KEY,
        "INFLUENCER_STATS_BREAKER_THRESHOLD": "1000",
    }
    log = tmp_path_factory.mktemp(f"service-{request.param}") / "service.log"
    with running_service(["--video-client", request.param, "--logger", "all"], log, env=env) as running:
        yield running


@pytest.mark.parametrize("status", REDIRECTS)
def test_a_redirect_is_a_502_upstream_misconfigured_and_the_key_never_reaches_its_target(
    service: RunningService, upstream: Upstream, status: int
) -> None:
    upstream.reset(status)
    with httpx.Client(base_url=service.url, timeout=HTTP_TIMEOUT_S) as http:
        collection = f"redirect-{status}"
        put = http.put(f"/collections/{collection}", json={"videos": [synthetic_video_id(status)]})
        assert put.status_code in (200, 201), put.text
        response = http.get(f"/collections/{collection}/stats")

    assert response.status_code == 502, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["type"] == "urn:influencer-stats:problem:upstream-misconfigured"
    assert f"{status}" in body["detail"]
    assert "redirect" in body["detail"]
    assert str(upstream.target_port) not in response.text  # the Location is not echoed
    assert API_KEY not in response.text
    assert upstream.target.seen() == []  # not followed: the target never heard of the call
    assert upstream.redirector.seen() == [API_KEY]  # one call (never retried), to the configured URL


def test_the_redirect_is_logged_as_a_misconfiguration_without_the_key(
    service: RunningService, upstream: Upstream
) -> None:
    upstream.reset(302)
    with httpx.Client(base_url=service.url, timeout=HTTP_TIMEOUT_S) as http:
        assert http.put("/collections/logged", json={"videos": [synthetic_video_id(1)]}).status_code in (
            200,
            201,
        )
        assert http.get("/collections/logged/stats").status_code == 502

    output = service.output()
    assert '"youtube.misconfigured"' in output
    assert "YOUTUBE_API_URL" in output
    assert API_KEY not in output
    assert upstream.target.seen() == []


def test_the_target_would_have_answered_200_with_every_video_missing(upstream: Upstream) -> None:
    """The double's other half works: what a client that follows redirects would have got."""
    upstream.reset(302)

    followed = httpx.get(
        upstream.videos_url,
        params={"part": "statistics", "id": synthetic_video_id(1)},
        headers={"X-Goog-Api-Key": API_KEY},
        follow_redirects=True,
        timeout=HTTP_TIMEOUT_S,
    )

    assert followed.status_code == 200
    assert followed.json()["items"] == []
    assert upstream.target.seen() == [API_KEY]
