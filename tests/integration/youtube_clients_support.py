"""For ``test_youtube_clients.py``: what the service should answer; talking to it and to the double."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from influencer_stats.bootstrap.videos import batches
from influencer_stats.domain.models import VideoId
from influencer_stats.interpreters.videos.synthetic import is_unknown, synthetic_stats, synthetic_video_id
from tests.support import YOUTUBE_CLIENTS, running_service
from youtube_double import VIDEOS_PATH
from youtube_double.nginx_double import server_block

CLIENTS = YOUTUBE_CLIENTS
API_KEY = "sk-test-7f3a9c"
IDS_PER_BATCH = 50  # Google's documented maximum of ids per videos.list call
HTTP_TIMEOUT_S = 10.0  # bounds every request the tests make

MISSING_ID = "Xdeleted_01"  # ids starting with X are missing in the synthetic world
KNOWN_IDS: list[str] = [synthetic_video_id(n) for n in range(120)]
# 121 ids; the missing one sits in the middle, so it lands inside a batch.
COLLECTION = [*KNOWN_IDS[:70], MISSING_ID, *KNOWN_IDS[70:]]


# --- What the service should do ----------------------------------------------------


def is_batched(client: str) -> bool:
    return batches(client)


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
    """The control API of the Python double (JSON shapes in youtube_double/control.py)."""

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

    def playlist(self, playlist_id: str, videos: Sequence[str], **marks: Sequence[str]) -> None:
        """Define a playlist (``marks``: private, deleted, unlisted ids among ``videos``)."""
        self._post("/_control/playlists", {"id": playlist_id, "videos": list(videos), **marks})

    def channel(self, channel_id: str, uploads: Sequence[str]) -> None:
        """Define a channel and its uploads playlist."""
        self._post("/_control/channels", {"id": channel_id, "uploads": list(uploads)})

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
