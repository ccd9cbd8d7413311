"""A collection's history end to end: real services taking snapshots every second.

- Every server answers /history and /growth from the snapshots the service took, and a
  DELETE takes the history with the collection; a page links to the next (``Link``), and an
  answer the client holds (its ``ETag``) is a 304.

On Redis: ``test_history_redis.py`` (the joint ``history__redis``).
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from tests.support import SERVERS, expected_stats, running_service, wait_for

EVERY_SECOND = {"INFLUENCER_STATS_SNAPSHOT_INTERVAL": "1"}
VIDEOS = [synthetic_video_id(n) for n in range(3)]


def points(http: httpx.Client, url: str, collection: str) -> list[dict[str, object]]:
    reply = http.get(f"{url}/collections/{collection}/history")
    assert reply.status_code == 200, reply.text
    found: list[dict[str, object]] = reply.json()["points"]
    return found


@pytest.mark.parametrize("server", SERVERS)
def test_every_server_answers_the_history_it_recorded_and_forgets_it_with_the_collection(
    server: str, tmp_path: Path
) -> None:
    with (
        running_service(["--server", server], tmp_path / "service.log", env=EVERY_SECOND) as service,
        httpx.Client(timeout=10) as http,
    ):
        assert http.put(f"{service.url}/collections/campaign", json={"videos": VIDEOS}).status_code == 201
        # Three: two before the last, a page of one and the next.
        assert wait_for(lambda: len(points(http, service.url, "campaign")) >= 3, timeout=15)

        first, *_, last = points(http, service.url, "campaign")
        before_last = {"until": str(last["at"])}  # what no new snapshot changes
        page = http.get(f"{service.url}/collections/campaign/history", params={**before_last, "limit": "1"})
        followed = http.get(f"{service.url}{page.links['next']['url']}")
        chart = http.get(f"{service.url}/collections/campaign/history.svg", params=before_last)
        unchanged = http.get(chart.url, headers={"if-none-match": chart.headers["etag"]})
        figures = {k: v for k, v in last.items() if k in ("impressions", "engagements", "score", "videos")}
        growth = http.get(f"{service.url}/collections/campaign/growth", params={"since": str(first["at"])})
        daily = http.get(f"{service.url}/collections/campaign/history", params={"step": "1d"}).json()
        assert http.delete(f"{service.url}/collections/campaign").status_code == 204
        gone = http.get(f"{service.url}/collections/campaign/history")

    stats = expected_stats(VIDEOS)
    assert figures == {k: stats[k] for k in figures} and last["gap"] is False
    assert growth.status_code == 200
    assert growth.json()["change"]["impressions"] == {"absolute": 0, "relative": 0.0}
    assert len(daily["points"]) == 1 and daily["points"][0]["at"] >= last["at"]
    assert gone.status_code == 404
    assert page.links["next"]["url"].startswith("/collections/campaign/history?until=")
    assert followed.json()["points"][0]["at"] > page.json()["points"][0]["at"]
    assert (unchanged.status_code, unchanged.content) == (304, b"")
    assert unchanged.headers["etag"] == chart.headers["etag"] and "content-type" not in unchanged.headers
