"""History queries on a large SQLite history beside collection reads and writes (issue 31), on a
real service process whose database ``perf/history_seed.py`` filled before it started: 300,000
points of collection ``big`` (17 days at 5 s) and 100,000 gaps of collection ``gaps`` (a growth
query over them reads the most a query may read: 100 reads of 1,000 points).

- ``step=1d`` answers every day at once, each day's last figures, and growth the very last point.
- Collection writes and reads complete while long history queries are in flight: the reads run on
  their own connection and thread (ordered by events, not by timing thresholds).
- A query past ``INFLUENCER_STATS_HISTORY_QUERY_TIMEOUT`` is cut: a 503 problem, logged, and the
  service goes on answering.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from influencer_stats.http.history_query import rfc3339
from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from perf.history_seed import seed
from perf.service import pooled
from tests.support import running_service

VIDEOS = [synthetic_video_id(n) for n in range(3)]
BIG, GAPS, INTERVAL = 300_000, 100_000, 5.0
END = 1_764_806_400.0  # 2025-12-04T00:00:00Z: the last point of each
#: Long queries at once, and collection writes (each a PUT then a GET) at most while they run.
LONG_QUERIES, MAX_WRITES = 8, 1_000
GROWTH_OF_GAPS = "/collections/gaps/growth?since=1970-01-01T00:00:00Z"


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("history-load") / "big.sqlite3"
    seed(path, BIG, INTERVAL, videos=VIDEOS, end=END)
    seed(path, GAPS, INTERVAL, videos=VIDEOS, collection="gaps", all_gaps=True, end=END)
    return path


def daily_by_hand() -> list[float]:
    """Each UTC day's last point of ``big`` that is not a gap (the seed makes one in 211 a gap)."""
    first = END - (BIG - 1) * INTERVAL
    days: dict[float, float] = {}
    for n in range(BIG):
        if n % 211:
            at = first + n * INTERVAL
            days[at // 86_400] = at
    return list(days.values())


def env(database: Path, timeout_s: str) -> dict[str, str]:
    return {"INFLUENCER_STATS_DB": str(database), "INFLUENCER_STATS_HISTORY_QUERY_TIMEOUT": timeout_s}


def test_a_daily_history_answers_every_day_at_once_and_growth_the_last_point(
    database: Path, tmp_path: Path
) -> None:
    with (
        running_service([], tmp_path / "service.log", env=env(database, "60")) as service,
        httpx.Client(base_url=service.url, timeout=60) as http,
    ):
        daily = http.get("/collections/big/history", params={"step": "1d"})
        growth = http.get("/collections/big/growth", params={"since": "1970-01-01T00:00:00Z"})

    assert daily.status_code == 200, daily.text
    points = daily.json()["points"]
    assert "next" not in daily.json()
    assert len(points) == 19  # 17.4 days from the 16th, 15:20 to the 4th, 00:00: 19 UTC days
    assert [p["at"] for p in points] == [rfc3339(at) for at in daily_by_hand()]
    assert points[-1]["at"] == "2025-12-04T00:00:00.000Z"
    assert growth.status_code == 200, growth.text
    assert growth.json()["to"]["at"] == "2025-12-04T00:00:00.000Z"


def test_collection_writes_and_reads_complete_while_long_history_queries_are_in_flight(
    database: Path, tmp_path: Path
) -> None:
    sent = threading.Barrier(LONG_QUERIES + 1)
    finished = threading.Event()

    def long_query(http: httpx.Client) -> httpx.Response:
        sent.wait(60)
        try:
            return http.get(GROWTH_OF_GAPS)
        finally:
            finished.set()

    with (
        running_service([], tmp_path / "service.log", env=env(database, "120")) as service,
        httpx.Client(base_url=service.url, timeout=120, limits=pooled(32)) as http,
        ThreadPoolExecutor(LONG_QUERIES) as pool,
    ):
        queries = [pool.submit(long_query, http) for _ in range(LONG_QUERIES)]
        sent.wait(60)  # every long query is being sent
        writes = 0
        while not finished.is_set() and writes < MAX_WRITES:
            put = http.put(f"/collections/w{writes % 10}", json={"videos": VIDEOS[: 1 + writes % 3]})
            got = http.get(f"/collections/w{writes % 10}")
            assert put.status_code in (200, 201) and got.status_code == 200, (put.text, got.text)
            assert got.json()["videos"] == VIDEOS[: 1 + writes % 3]
            writes += 1
        answers = [query.result(timeout=120) for query in queries]

    assert all(a.status_code == 404 and a.json()["type"].endswith(":no-snapshots") for a in answers)
    # Each write is one transaction on the writer's thread; had it waited behind the long queries'
    # 800 reads, not one would have finished before the first query did.
    assert writes >= 5, writes


def test_a_history_query_past_its_deadline_is_cut_with_a_503_problem(database: Path, tmp_path: Path) -> None:
    log = tmp_path / "service.log"
    with (
        running_service([], log, env=env(database, "0.001")) as service,
        httpx.Client(base_url=service.url, timeout=60) as http,
    ):
        started = time.monotonic()
        cut = [http.get(GROWTH_OF_GAPS), http.get("/collections/big/history?step=1s&limit=1000")]
        elapsed = time.monotonic() - started
        put = http.put("/collections/after", json={"videos": VIDEOS})
        got = http.get("/collections/big")
        alive = http.get("/healthz")

    for reply in cut:
        assert reply.status_code == 503, reply.text
        assert reply.json()["type"].endswith(":history-query-timeout")
        assert reply.headers["retry-after"] == "1"
    assert elapsed < 60  # bounded by the client's timeout; cut long before in practice
    assert put.status_code == 201 and got.status_code == 200 and alive.status_code == 200
    assert log.read_text().count('"history.query_timeout"') == 2
