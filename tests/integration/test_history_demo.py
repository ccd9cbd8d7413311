"""The offline demo moves: ``main.py --profile demo`` (what `make run` serves) taking a snapshot
every second, its fake client's world running a day a second, records a history that rises,
a growth that is not 0, and a chart labelled with each panel's range."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from tests.support import running_service, wait_for

#: The README's collection.
VIDEOS = ["-4lB5EKS5Uk", "-jlLkTtgWUk", "1FEFpk-uIYo"]
FAST = {"INFLUENCER_STATS_SNAPSHOT_INTERVAL": "1", "INFLUENCER_STATS_FAKE_GROWTH": "86400"}
FIGURES = ("impressions", "engagements", "score")


def test_the_demo_records_a_history_that_grows_and_draws_it(tmp_path: Path) -> None:
    with (
        running_service(["--profile", "demo"], tmp_path / "service.log", env=FAST) as service,
        httpx.Client(base_url=service.url, timeout=10) as http,
    ):
        assert http.put("/collections/campaign", json={"videos": VIDEOS}).status_code == 201

        def points() -> list[dict[str, object]]:
            found: list[dict[str, object]] = http.get("/collections/campaign/history").json()["points"]
            return found

        assert wait_for(lambda: len(points()) >= 3, timeout=20), service.output()
        history = points()
        growth = http.get("/collections/campaign/growth", params={"since": str(history[0]["at"])})
        chart = http.get("/collections/campaign/history.svg").text

    assert not any(p["gap"] for p in history)
    for name in FIGURES:
        series = [int(str(p[name])) for p in history]
        assert series == sorted(series) and series[-1] > series[0], (name, series)
    assert growth.status_code == 200, growth.text
    change = growth.json()["change"]
    assert all(change[name]["absolute"] > 0 and change[name]["relative"] > 0 for name in FIGURES), change
    labels = re.findall(r'<text class="value"[^>]*>([0-9,]+)</text>', chart)
    assert len(labels) == 4 and labels[0] != labels[1] and labels[2] != labels[3], labels
