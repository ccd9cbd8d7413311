"""A client's share of YouTube units (the ``shares`` slice) over reads of playlists and channels
(the ``sources`` slice): the real service and the YouTube double as their own processes, on real
sockets, clients told apart by the address a trusted proxy forwards. The ``sources`` and the
``shares`` slices' both: it goes with the first removed.

- An import (``PUT`` with ``{"playlist": …}``) and a user's refresh past the client's share are
  ``429 share-spent`` with ``Retry-After``: no page is read for them and nothing is saved (the
  collection stays as it was); a write of ids, which spends nothing, is still stored; another
  client imports on its own share.
- A refresh on the service's timer is the service's own work: no client's share refuses it, so a
  collection whose client is past its share is still kept up to date.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.integration.test_source_reads import VIDEOS, _env
from tests.integration.test_sources import _calls
from tests.integration.youtube_clients_support import YouTubeDouble
from tests.support import profile_args, running_double_process, running_service, wait_for
from youtube_double import VIDEOS_PATH

A = {"x-forwarded-for": "198.51.100.7"}
B = {"x-forwarded-for": "203.0.113.9"}
#: Two pages of a playlist: two units, a client's whole share.
SHARE = "2/hour"


@pytest.fixture
def double(tmp_path: Path) -> Iterator[tuple[str, YouTubeDouble]]:
    with running_double_process(tmp_path / "double.log") as url:
        yield url, YouTubeDouble(url.removesuffix(VIDEOS_PATH))


def _share_spent(reply: httpx.Response) -> bool:
    return (
        reply.status_code == 429
        and reply.json()["type"].endswith(":share-spent")
        and reply.headers["content-type"] == "application/problem+json"
        and 0 < int(reply.headers["retry-after"]) <= 3600
    )


def test_an_import_and_a_refresh_past_the_clients_share_are_refused_reading_and_saving_nothing(
    double: tuple[str, YouTubeDouble], tmp_path: Path
) -> None:
    url, youtube = double
    youtube.playlist("PLa", VIDEOS[:60])  # 2 pages
    youtube.playlist("PLb", VIDEOS[60:90])  # 1 page
    env = _env(
        url,
        INFLUENCER_STATS_SHARE=SHARE,
        INFLUENCER_STATS_SHARE_PROXIES="1",
        INFLUENCER_STATS_REFRESH_MIN_INTERVAL="0",  # a refresh is refused only for the share
    )
    with (
        running_service(profile_args("youtube"), tmp_path / "s.log", env=env) as service,
        httpx.Client(base_url=service.url, timeout=30) as http,
    ):
        imported = http.put("/collections/a", json={"playlist": "PLa"}, headers=A)
        pages = _calls(youtube)[0]
        refused_import = http.put("/collections/c", json={"playlist": "PLb"}, headers=A)
        youtube.playlist("PLa", VIDEOS[1:61])  # what a refresh would pick up
        refused_refresh = http.post("/collections/a/refresh", json={}, headers=A)
        pages_refused = _calls(youtube)[0] - pages
        kept = http.get("/collections/a", headers=A)
        never_saved = http.get("/collections/c", headers=A)
        ids = http.put("/collections/d", json={"videos": VIDEOS[:3]}, headers=A)
        other = http.put("/collections/b", json={"playlist": "PLb"}, headers=B)
        listed = http.get("/collections").json()["ids"]

    assert imported.status_code == 201 and imported.json()["videos"] == VIDEOS[:60]
    assert pages == 2
    assert _share_spent(refused_import) and _share_spent(refused_refresh)
    assert pages_refused == 0  # no page read for a client past its share
    assert kept.json() == {"videos": VIDEOS[:60], "source": {"playlist": "PLa"}}
    assert never_saved.status_code == 404
    assert ids.status_code == 201  # a write of ids spends nothing: never refused for the share
    assert other.status_code == 201 and other.json()["videos"] == VIDEOS[60:90]
    assert sorted(listed) == ["a", "b", "d"]


def test_a_refresh_on_the_services_timer_is_its_own_and_no_clients_share_refuses_it(
    double: tuple[str, YouTubeDouble], tmp_path: Path
) -> None:
    url, youtube = double
    youtube.playlist("PLa", VIDEOS[:60])  # 2 pages: the client's whole share
    env = _env(
        url,
        INFLUENCER_STATS_SHARE=SHARE,
        INFLUENCER_STATS_SHARE_PROXIES="1",
        INFLUENCER_STATS_REFRESH_MIN_INTERVAL="0",
        INFLUENCER_STATS_SOURCE_REFRESH_INTERVAL="1",
    )
    with (
        running_service(profile_args("youtube"), tmp_path / "s.log", env=env) as service,
        httpx.Client(base_url=service.url, timeout=30) as http,
    ):
        assert http.put("/collections/a", json={"playlist": "PLa"}, headers=A).status_code == 201
        youtube.playlist("PLa", VIDEOS[1:61])
        refused = http.post("/collections/a/refresh", json={}, headers=A)
        # The timer's next interval reads it (bounded: 20 s at most).
        refreshed = wait_for(lambda: http.get("/collections/a").json()["videos"] == VIDEOS[1:61], 20)

    assert _share_spent(refused)
    assert refreshed  # read on the timer, the client's share spent or not
