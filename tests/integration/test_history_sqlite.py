"""The SQLite history end to end (the ``history__sqlite`` joint): it survives a restart of the
service (the default profile's store, and so its history, is SQLite with the slice)."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.integration.test_history import EVERY_SECOND, VIDEOS, points
from tests.support import running_service, wait_for


def test_the_sqlite_history_survives_a_restart(tmp_path: Path) -> None:
    log = tmp_path / "service.log"  # the same log name: the same database file
    with (
        running_service(["--store", "sqlite"], log, env=EVERY_SECOND) as service,
        httpx.Client(timeout=10) as http,
    ):
        http.put(f"{service.url}/collections/kept", json={"videos": VIDEOS})
        assert wait_for(lambda: len(points(http, service.url, "kept")) >= 1, timeout=15)
        before = points(http, service.url, "kept")

    with (
        running_service(["--store", "sqlite"], log) as again,
        httpx.Client(timeout=10) as http,
    ):  # no snapshots now
        after = points(http, again.url, "kept")

    assert after[: len(before)] == before
