"""Fixtures that run the real service on a real socket."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support import SERVERS, RunningService, running_service


@pytest.fixture(scope="module", params=SERVERS)
def service(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningService]:
    """The default profile on each server, one process per module and server."""
    log = tmp_path_factory.mktemp("service") / "service.log"
    with running_service(["--server", request.param], log) as running:
        yield running


@pytest.fixture
def client(service: RunningService) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.url, timeout=10) as c:
        yield c
