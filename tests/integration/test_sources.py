"""Collections from a playlist or a channel as a user runs them: real services, the YouTube double
as its own process (SQLite: ``test_sources_sqlite.py``, Redis: ``test_sources_redis.py``).

- Every server reads a playlist and a channel page by page, counted by the double: a unit a
  call, a refresh picks the new uploads up, a list over the limit costs one call, a missing one
  and YouTube's quota error answer problems.
- What they spend of the day's budget: test_sources_quota.py (the ``quota`` slice's too).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from tests.integration.youtube_clients_support import YouTubeDouble
from tests.support import (
    SERVERS,
    expected_stats,
    profile_args,
    running_double_process,
    running_service,
)
from youtube_double import VIDEOS_PATH

VIDEOS = [str(synthetic_video_id(n)) for n in range(130)]
CHANNEL = "UC" + "s" * 22


@pytest.fixture
def double(tmp_path: Path) -> Iterator[tuple[str, YouTubeDouble]]:
    with running_double_process(tmp_path / "double.log") as url:
        yield url, YouTubeDouble(url.removesuffix(VIDEOS_PATH))


def _env(url: str, **settings: str) -> dict[str, str]:
    return {"YOUTUBE_API_URL": url, "YOUTUBE_API_KEY": "any", **settings}


def _calls(youtube: YouTubeDouble) -> tuple[int, int]:
    counters = youtube.counters()
    return int(counters["playlist_items_calls"]), int(counters["channels_calls"])


@pytest.mark.parametrize("server", SERVERS)
def test_every_server_reads_playlists_and_channels_from_youtube_a_unit_a_call(
    server: str, double: tuple[str, YouTubeDouble], tmp_path: Path
) -> None:
    url, youtube = double
    youtube.playlist("PLlaunch", VIDEOS[:120], private=[VIDEOS[5]], deleted=[VIDEOS[6]])
    youtube.channel(CHANNEL, VIDEOS[120:130])
    youtube.playlist("PLhuge", VIDEOS[:101])
    env = _env(url, INFLUENCER_STATS_MAX_VIDEOS="100", INFLUENCER_STATS_REFRESH_MIN_INTERVAL="0")
    with (
        running_service(
            [*profile_args("youtube"), "--server", server], tmp_path / "s.log", env=env
        ) as service,
        httpx.Client(base_url=service.url, timeout=30) as http,
    ):
        launch = http.put("/collections/launch", json={"playlist": "PLlaunch"})
        calls_launch = _calls(youtube)
        creator = http.put("/collections/creator", json={"channel": CHANNEL})
        stats = http.get("/collections/creator/stats")
        youtube.channel(CHANNEL, VIDEOS[118:130])  # two new uploads
        refreshed = http.post("/collections/creator/refresh", json={})
        shown = http.get("/collections/creator")
        before_huge = _calls(youtube)
        huge = http.put("/collections/huge", json={"playlist": "PLhuge"})
        after_huge = _calls(youtube)
        missing = http.put("/collections/missing", json={"playlist": "PLnothing"})
        youtube.fault("quota", count=1)
        quota = http.post("/collections/creator/refresh", json={})
        listed = http.get("/collections").json()["ids"]

    assert launch.status_code == 422 and launch.json()["type"].endswith("source-too-large")  # 120 > 100
    assert calls_launch == (1, 0)
    assert creator.status_code == 201 and creator.json()["videos"] == VIDEOS[120:130]
    assert creator.json()["source"] == {"channel": CHANNEL}
    assert stats.status_code == 200 and stats.json() == {**expected_stats(VIDEOS[120:130]), "missing": []}
    assert refreshed.status_code == 200 and (refreshed.json()["added"], refreshed.json()["removed"]) == (2, 0)
    assert shown.json() == {"videos": VIDEOS[118:130], "source": {"channel": CHANNEL}}
    assert huge.status_code == 422 and huge.json()["videos"] == 101 and huge.json()["limit"] == 100
    assert after_huge[0] - before_huge[0] == 1  # refused from YouTube's count, on the first page
    assert missing.status_code == 422 and missing.json()["type"].endswith("source-not-found")
    assert quota.status_code == 503 and quota.json()["type"].endswith("upstream-quota-exceeded")
    assert listed == ["creator"]  # nothing refused was saved


def test_a_playlist_over_the_default_limit_of_5000_is_refused_after_one_call(
    double: tuple[str, YouTubeDouble], tmp_path: Path
) -> None:
    url, youtube = double
    youtube.playlist("PLtoolong", [str(synthetic_video_id(n)) for n in range(5_001)])
    with running_service(profile_args("youtube"), tmp_path / "s.log", env=_env(url)) as service:
        refused = httpx.put(f"{service.url}/collections/long", json={"playlist": "PLtoolong"}, timeout=30)

    assert refused.status_code == 422 and refused.headers["content-type"] == "application/problem+json"
    assert (refused.json()["videos"], refused.json()["limit"]) == (5_001, 5_000)
    assert "5,001" in refused.json()["detail"] and "5,000" in refused.json()["detail"]
    assert _calls(youtube) == (1, 0)


def _passes(tmp_path: Path, after: int) -> dict[int, list[dict[str, int]]]:
    """The ``sources.refreshes`` lines of both processes for each interval after ``after``."""
    passes: dict[int, list[dict[str, int]]] = defaultdict(list)
    for log in (tmp_path / "a.log", tmp_path / "b.log"):
        for line in log.read_text().splitlines():
            event = json.loads(line) if line.startswith("{") else {}
            if event.get("event") == "sources.refreshes" and event["slot"] > after:
                passes[event["slot"]].append(event)
    return passes


def _slots_both_passed(tmp_path: Path, after: int) -> int:
    return sum(1 for seen in _passes(tmp_path, after).values() if len(seen) == 2)
