"""The stats cache as a user sees it: headers, and read-your-writes over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support import SERVERS, RunningService, running_service

VIDEOS = ["-4lB5EKS5Uk", "-jlLkTtgWUk", "1FEFpk-uIYo"]


@pytest.fixture(scope="module", params=SERVERS)
def cached_service(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningService]:
    log: Path = tmp_path_factory.mktemp("cached") / "service.log"
    with running_service(["--server", request.param, "--cache", "stats"], log) as service:
        yield service


def test_the_first_read_is_a_miss_and_the_next_a_hit_with_an_age(cached_service: RunningService) -> None:
    with httpx.Client(base_url=cached_service.url) as client:
        client.put("/collections/hits", json={"videos": VIDEOS})

        miss = client.get("/collections/hits/stats")
        hit = client.get("/collections/hits/stats")

    assert miss.headers["cache-status"] == "influencer-stats; fwd=miss; stored"
    assert hit.headers["cache-status"].startswith("influencer-stats; hit; ttl=")
    assert int(hit.headers["age"]) >= 0
    assert hit.json() == miss.json()


def test_a_write_is_visible_to_the_very_next_read(cached_service: RunningService) -> None:
    with httpx.Client(base_url=cached_service.url) as client:
        client.put("/collections/ryw", json={"videos": VIDEOS})
        client.get("/collections/ryw/stats")
        client.get("/collections/ryw/stats")

        for n in range(1, 4):
            client.put("/collections/ryw", json={"videos": VIDEOS[:n]})
            assert client.get("/collections/ryw/stats").json()["videos"] == n

        client.delete("/collections/ryw")
        assert client.get("/collections/ryw/stats").status_code == 404
