"""Fixtures that run the real service on a real socket."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
from _pytest.runner import runtestprotocol

from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.bootstrap.supervision import SUPERVISION
from tests.support import SERVERS, SHARED_STORE, RunningService, running_service

if TYPE_CHECKING:
    from tests.otlp_receiver import Receiver


#: What a server prints when it killed a worker that did not stop within the graceful time.
#: Granian 2.8 workers can deadlock at shutdown (the runtime dropped while a runtime thread waits
#: for the GIL: emmett-framework/granian#875, no release fixes it yet), about once in a few
#: hundred stops on this machine, never in a row.
HUNG_WORKER_KILLED = "after it refused to gracefully stop"


_TMP_PATH = pytest.StashKey[Path]()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    folder = (getattr(item, "funcargs", None) or {}).get("tmp_path")
    if isinstance(folder, Path):
        item.stash[_TMP_PATH] = folder  # the fixtures are gone by the time the reports are read


def _a_worker_hung(item: pytest.Item) -> bool:
    folder = item.stash.get(_TMP_PATH, None)
    if folder is None or not folder.is_dir():
        return False
    return any(
        HUNG_WORKER_KILLED in path.read_text(errors="replace") for path in folder.rglob("*") if path.is_file()
    )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool:
    """Run each test; run it once more only when it failed because a server killed a worker hung
    in that upstream deadlock (its kill line in the test's own files), and say so. A second
    failure stands, so a worker that never stops still fails its test."""
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    reports = runtestprotocol(item, nextitem=nextitem, log=False)
    if any(report.failed for report in reports) and _a_worker_hung(item):
        said = item.config.pluginmanager.get_plugin("terminalreporter")
        if said is not None:
            said.write_line(
                f"\n{item.nodeid}: a worker hung at shutdown and was killed (granian#875); once more"
            )
        item._initrequest()  # type: ignore[attr-defined]  # fresh fixtures, as pytest-rerunfailures does
        reports = runtestprotocol(item, nextitem=nextitem, log=False)
    for report in reports:
        item.ihook.pytest_runtest_logreport(report=report)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


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


@pytest.fixture
def shared_store_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server ``SHARED_STORE`` needs, for every process the test starts (they inherit the
    environment): none with SQLite; on Redis (the sqlite slice removed) this test process's
    Redis, under a prefix of its own (``tests.shared_redis``). With neither slice no store is
    shared by workers: the test fails here, saying so (it needs one of the two)."""
    if SHARED_STORE is None and SUPERVISION.supervisor is None:
        return  # one process only (the workers slice removed): nothing here is shared by workers
    if SHARED_STORE is None:
        pytest.fail("no store workers share is installed: this suite needs the sqlite or the redis slice")
    if "redis" not in SLOTS["store"].registry[SHARED_STORE].needs:
        return
    from tests.shared_redis import shared_redis_url, unique_prefix

    monkeypatch.setenv("REDIS_URL", shared_redis_url())
    monkeypatch.setenv("INFLUENCER_STATS_REDIS_PREFIX", unique_prefix())
