"""Each client's share of YouTube units (the ``shares`` slice) over real sockets: the service and
the YouTube double as their own processes, clients told apart by the address a trusted proxy
forwards (``INFLUENCER_STATS_SHARE_PROXIES=1``) or the peer's.

- One client hammering new ids is refused with a 429, ``Retry-After`` and a problem body past
  its share, spending no more than it, while another client's uncached asks still answer 200.
- Every server tells clients apart the same way (forwarded address, peer), and a cached answer
  stays free past the share; without trusted proxies a forwarded address names no client on any
  server (uvicorn's own proxy headers are off).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.integration.test_hardening_upstream import PROBLEM, calls_made, new_videos, youtube_env
from tests.support import SERVERS, profile_args, running_double_process, running_service

#: Ids a collection: one videos.list call, one unit.
IDS = 50


@pytest.fixture
def double(tmp_path: Path) -> Iterator[str]:
    with running_double_process(tmp_path / "double.log") as url:
        yield url


def ask_new(client: httpx.Client, name: str, first: int, forwarded: str | None) -> httpx.Response:
    """Write a collection of ``IDS`` new ids and ask its stats (one unit, uncached), as ``forwarded``."""
    headers = {} if forwarded is None else {"x-forwarded-for": forwarded}
    assert client.put(f"/collections/{name}", json={"videos": new_videos(first, IDS)}).is_success
    return client.get(f"/collections/{name}/stats", headers=headers)


def test_a_client_hammering_new_ids_is_refused_past_its_share_while_another_is_answered(
    double: str, tmp_path: Path
) -> None:
    share = 20
    env = youtube_env(double, INFLUENCER_STATS_SHARE=f"{share}/hour", INFLUENCER_STATS_SHARE_PROXIES="1")
    argv = [*profile_args("youtube"), "--server", SERVERS[0]]
    with (
        running_service(argv, tmp_path / "service.log", env=env) as service,
        httpx.Client(base_url=service.url, timeout=30) as client,
        ThreadPoolExecutor(max_workers=6) as pool,
    ):
        hammer = "6.6.6.6, 198.51.100.7"  # what it forged first is not who it is
        hammered = pool.map(lambda n: ask_new(client, f"h{n}", 1_000_000 + n * IDS, hammer), range(3 * share))
        others = pool.map(lambda n: ask_new(client, f"o{n}", 9_000_000 + n * IDS, "203.0.113.9"), range(5))
        answered: list[httpx.Response] = []
        refused: list[httpx.Response] = []
        for reply in hammered:
            (refused if reply.status_code == 429 else answered).append(reply)
        other_statuses = [reply.status_code for reply in others]
        spent = calls_made(double)

    assert other_statuses == [200] * 5  # uncached, beside the hammering
    assert {reply.status_code for reply in answered} == {200}
    assert len(answered) <= share and len(refused) >= 2 * share
    assert spent <= share + 5  # its share and the other's five: never more
    body = refused[0].json()
    assert body["type"] == PROBLEM + "share-spent" and body["status"] == 429
    assert 0 < int(refused[0].headers["retry-after"]) <= 3600
    assert refused[0].headers["content-type"] == "application/problem+json"


@pytest.mark.parametrize("server", SERVERS)
def test_every_server_tells_clients_apart_alike_and_cached_answers_stay_free(
    server: str, double: str, tmp_path: Path
) -> None:
    env = youtube_env(double, INFLUENCER_STATS_SHARE="2/hour", INFLUENCER_STATS_SHARE_PROXIES="1")
    argv = [*profile_args("youtube"), "--server", server]
    with (
        running_service(argv, tmp_path / "service.log", env=env) as service,
        httpx.Client(base_url=service.url, timeout=30) as client,
    ):
        forwarded = [ask_new(client, f"f{n}", 100 * n, "198.51.100.7").status_code for n in range(3)]
        again = client.get("/collections/f0/stats", headers={"x-forwarded-for": "198.51.100.7"})
        other = ask_new(client, "g", 1_000, "203.0.113.9").status_code
        # No header: the peer (127.0.0.1, however the server hands it over) is one more client.
        peer = [ask_new(client, f"p{n}", 2_000 + 100 * n, None).status_code for n in range(3)]

    assert forwarded == [200, 200, 429]
    assert again.status_code == 200  # cached: free past the share
    assert other == 200
    assert peer == [200, 200, 429]


@pytest.mark.parametrize("server", SERVERS)
def test_without_trusted_proxies_a_forwarded_address_changes_no_client_on_any_server(
    server: str, double: str, tmp_path: Path
) -> None:
    env = youtube_env(double, INFLUENCER_STATS_SHARE="2/hour")  # INFLUENCER_STATS_SHARE_PROXIES=0
    argv = [*profile_args("youtube"), "--server", server]
    with (
        running_service(argv, tmp_path / "service.log", env=env) as service,
        httpx.Client(base_url=service.url, timeout=30) as client,
    ):
        # Each asks as another forwarded address: written by the client, so it is no one's name.
        statuses = [ask_new(client, f"x{n}", 100 * n, f"198.51.100.{n}").status_code for n in range(3)]

    assert statuses == [200, 200, 429]
