"""``/metrics`` with ``--workers 2`` on every server: no counter series ever goes down.

Prometheus takes a counter that goes down for a restart. Each scrape is answered by
whichever worker accepts its connection, adding its live values to the other's last
snapshot: before, worker B's answer read worker A's file of up to a second earlier, below
what A had just shown (asgi, under load, scraped every 100 ms: 24 of 218 scrapes went
down, by up to 1,969). Here a bounded load runs on new connections while ``/metrics`` is
scraped again and again, each scrape on a new connection too.
"""

from __future__ import annotations

import re
import threading
from itertools import pairwise
from pathlib import Path

import httpx
import pytest

from tests.support import SERVERS, SHARED_STORE_ARGS, running_service

#: A new connection per request, so the kernel may hand each to another worker.
ONE_SHOT = httpx.Limits(max_keepalive_connections=0)
LOAD = 600
SCRAPES = 120
#: A counter's sample: a ``_total``, or a histogram's ``_count``, ``_sum`` or ``_bucket``.
_COUNTER = re.compile(r"^(\w+(?:_total|_count|_sum|_bucket)(?:\{[^}]*\})?) (\S+)$", re.MULTILINE)


def _counters(text: str) -> dict[str, float]:
    return {series: float(value) for series, value in _COUNTER.findall(text)}


def _load(url: str, count: int) -> None:
    with httpx.Client(base_url=url, limits=ONE_SHOT, timeout=10) as client:
        for n in range(count):
            client.get("/healthz" if n % 3 else "/collections/m/stats")


@pytest.mark.usefixtures("shared_store_server")
@pytest.mark.parametrize("server", SERVERS)
def test_with_two_workers_no_counter_goes_down_from_one_scrape_to_the_next(
    server: str, tmp_path: Path
) -> None:
    multiproc = tmp_path / "prom"
    multiproc.mkdir()
    env = {"PROMETHEUS_MULTIPROC_DIR": str(multiproc)}
    args = ["--server", server, *SHARED_STORE_ARGS, "--cache", "none", "--video-client", "fake"]
    with running_service([*args, "--workers", "2"], tmp_path / "w.log", env=env) as service:
        loaders = [threading.Thread(target=_load, args=(service.url, LOAD // 2)) for _ in range(2)]
        for loader in loaders:
            loader.start()
        scrapes: list[dict[str, float]] = []
        with httpx.Client(base_url=service.url, limits=ONE_SHOT, timeout=10) as client:
            while len(scrapes) < SCRAPES and any(loader.is_alive() for loader in loaders):
                scrapes.append(_counters(client.get("/metrics").text))
        for loader in loaders:
            loader.join(timeout=60)
        snapshots = {path.stem for path in multiproc.glob("*.json")}

    went_down = [
        (n, series, before[series], after[series])
        for n, (before, after) in enumerate(pairwise(scrapes))
        for series in before.keys() & after.keys()
        if after[series] < before[series]
    ]
    assert len(scrapes) >= 10, len(scrapes)  # the load outlasted ten scrapes at least
    assert len(snapshots) >= 2  # two workers wrote their values
    assert not went_down, f"{len(went_down)} decreases over {len(scrapes)} scrapes, first: {went_down[:5]}"
