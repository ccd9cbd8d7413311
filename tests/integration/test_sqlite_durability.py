"""The default store keeps every acknowledged write, across restarts and kill -9."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx

from tests.support import running_service


def test_200_acknowledged_puts_survive_a_kill_9(tmp_path: Path) -> None:
    db = str(tmp_path / "durable.sqlite3")
    written: dict[str, list[str]] = {}
    with running_service([], tmp_path / "first.log", env={"INFLUENCER_STATS_DB": db}) as service:
        with httpx.Client(base_url=service.url) as client:
            for n in range(200):
                videos = [f"{n:011d}"] if n % 2 else []
                response = client.put(f"/collections/k{n}", json={"videos": videos})
                assert response.status_code == 201
                written[f"k{n}"] = videos
        service.process.send_signal(signal.SIGKILL)  # no shutdown, no flush, no goodbye
        service.process.wait(10)

    with (
        running_service([], tmp_path / "second.log", env={"INFLUENCER_STATS_DB": db}) as restarted,
        httpx.Client(base_url=restarted.url) as client,
    ):
        assert client.get("/collections", params={"limit": 1000}).json()["ids"] == sorted(written)
        for cid, videos in written.items():
            assert client.get(f"/collections/{cid}").json() == {"videos": videos}


def test_readyz_reports_the_sqlite_dependency(tmp_path: Path) -> None:
    with running_service([], tmp_path / "ready.log") as service:
        ready = httpx.get(service.url + "/readyz")

    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "checks": {"sqlite": "ok"}}


def test_the_database_directory_is_created(tmp_path: Path) -> None:
    db = tmp_path / "nested" / "dir" / "stats.sqlite3"
    with running_service([], tmp_path / "mkdir.log", env={"INFLUENCER_STATS_DB": str(db)}) as service:
        assert httpx.put(service.url + "/collections/x", json={"videos": []}).status_code == 201

    assert db.exists()
