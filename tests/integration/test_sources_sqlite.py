"""The collections' sources on SQLite (the ``sources__sqlite`` joint), real services and the
YouTube double as its own process.

- The SQLite sources survive a restart (a refresh after it still knows the playlist).
- Refreshes racing PUTs of ids and DELETEs on SQLite lose nothing, leave no orphan source row.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import httpx

from tests.integration.test_source_races import EVERY_REFRESH_READS, assert_nothing_lost, run_races
from tests.integration.test_source_races import youtube as youtube  # the fixture, delayed reads
from tests.integration.test_sources import VIDEOS, _env
from tests.integration.test_sources import double as double  # the fixture
from tests.integration.youtube_clients_support import YouTubeDouble
from tests.support import profile_args, running_service

#: The youtube profile on the SQLite store (its default with the slice; said, not assumed).
DURABLE = [*profile_args("youtube"), "--store", "sqlite"]


def test_the_sqlite_sources_survive_a_restart(double: tuple[str, YouTubeDouble], tmp_path: Path) -> None:
    url, youtube = double
    youtube.playlist("PLkept", VIDEOS[:3])
    log = tmp_path / "s.log"  # the same log name: the same database file
    with running_service(DURABLE, log, env=_env(url)) as service:
        assert httpx.put(f"{service.url}/collections/kept", json={"playlist": "PLkept"}).status_code == 201
    youtube.playlist("PLkept", VIDEOS[:4])
    with running_service(DURABLE, log, env=_env(url)) as again:
        refreshed = httpx.post(f"{again.url}/collections/kept/refresh", json={}, timeout=30)

    assert refreshed.status_code == 200
    assert refreshed.json() == {
        "videos": VIDEOS[:4],
        "source": {"playlist": "PLkept"},
        "added": 1,
        "removed": 0,
    }


def test_on_sqlite_no_refresh_overwrites_ids_or_outlives_a_delete(youtube: str, tmp_path: Path) -> None:
    db = tmp_path / "races.sqlite3"
    env = {
        "YOUTUBE_API_URL": youtube,
        "YOUTUBE_API_KEY": "any",
        "INFLUENCER_STATS_DB": str(db),
        **EVERY_REFRESH_READS,
    }
    with running_service(DURABLE, tmp_path / "s.log", env=env) as service:
        counts = run_races(service.url)

    def orphans() -> int:
        with sqlite3.connect(db) as read:
            return int(
                read.execute(
                    "SELECT count(*) FROM collection_sources s"
                    " WHERE NOT EXISTS (SELECT 1 FROM collections c WHERE c.id = s.id)"
                ).fetchone()[0]
            )

    assert_nothing_lost(counts, orphans)
