"""Fixtures that run the real service on a real socket."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import httpx
import pytest

from tests.support import SERVERS, RunningService, running_service

if TYPE_CHECKING:
    from tests.otlp_receiver import Receiver


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


@pytest.fixture
def otlp_receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    """Where ``tracing=otel`` exports (the SDK reads OTEL_* from the process's environment);
    asked for by ``tests.needs`` when a chosen entry declares ``needs=("otlp",)``."""
    from tests.otlp_receiver import running_receiver  # opentelemetry-proto: for this fixture only

    with running_receiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
        yield receiver
