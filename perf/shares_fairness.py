"""Another client's uncached p50 alone and beside a client hammering new ids (the ``shares`` slice).

    python -m perf.shares_fairness [--asks 30] [--hammerers 8] [--share 200/hour] [--latency-ms 20]

Starts the YouTube double (each call delayed ``--latency-ms``) and the service (the ``youtube``
profile, a budget of 10,000 units, ``INFLUENCER_STATS_SHARE``, one trusted proxy so the two
clients differ by ``X-Forwarded-For``). Client B writes ``--asks`` collections of 50 new ids one at
a time and times each uncached stats answer, first alone, then while ``--hammerers`` concurrent
loops of client A write and ask new ids without pause, once A is past its share (429s). Prints B's
p50 both ways, their ratio (the target: below 2), and what A was answered. Bounded: A stops
when B's asks are done.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from perf.procs import PYTHON, free_port, running, wait_until_ok
from perf.service import installed_argv, service_env

IDS = 50


def _videos(first: int) -> list[str]:
    return [synthetic_video_id(first + n) for n in range(IDS)]


async def _ask(client: httpx.AsyncClient, name: str, first: int, forwarded: str) -> tuple[int, float]:
    """Write ``name`` with 50 new ids, then ask its stats: the status and the seconds the ask took."""
    await client.put(f"/collections/{name}", json={"videos": _videos(first)})
    started = time.perf_counter()
    reply = await client.get(f"/collections/{name}/stats", headers={"x-forwarded-for": forwarded})
    return reply.status_code, time.perf_counter() - started


async def _b(client: httpx.AsyncClient, asks: int, first: int) -> list[float]:
    took = []
    for n in range(asks):
        status, seconds = await _ask(client, f"b{first}-{n}", first + n * IDS, "203.0.113.9")
        if status != 200:
            raise SystemExit(f"client B was answered {status}")
        took.append(seconds)
    return took


async def _hammer(client: httpx.AsyncClient, loop: int, stop: asyncio.Event, seen: Counter[int]) -> None:
    for n in range(100_000):  # bounded; stopped when B is done
        if stop.is_set():
            return
        status, _ = await _ask(
            client, f"a{loop}-{n % 20}", 50_000_000 + (loop * 100_000 + n) * IDS, "198.51.100.7"
        )
        seen[status] += 1


async def _measure(url: str, asks: int, hammerers: int) -> tuple[list[float], list[float], Counter[int]]:
    limits = httpx.Limits(max_connections=hammerers + 2, max_keepalive_connections=hammerers + 2)
    async with httpx.AsyncClient(base_url=url, timeout=30, limits=limits) as client:
        alone = await _b(client, asks, 1_000_000)
        stop, seen = asyncio.Event(), Counter[int]()
        loops = [asyncio.create_task(_hammer(client, n, stop, seen)) for n in range(hammerers)]
        for _ in range(200):  # bounded (20 s): B asks once A is past its share, refused
            if seen[429] >= hammerers:
                break
            await asyncio.sleep(0.1)
        beside = await _b(client, asks, 2_000_000)
        stop.set()
        await asyncio.gather(*loops)
    return alone, beside, seen


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--asks", type=int, default=30)
    parser.add_argument("--hammerers", type=int, default=8)
    parser.add_argument("--share", default="200/hour")
    parser.add_argument("--latency-ms", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        logs = Path(folder)
        double_port, port = free_port(), free_port()
        double_argv = [
            PYTHON,
            "-m",
            "youtube_double",
            "--port",
            str(double_port),
            "--latency-ms",
            str(args.latency_ms),
        ]
        with running(double_argv, logs / "double.log") as double:
            wait_until_ok(double_port, "/healthz", double, logs / "double.log")
            env = service_env(
                f"http://127.0.0.1:{double_port}/youtube/v3/videos",
                "any",
                {
                    "INFLUENCER_STATS_QUOTA_PER_DAY": "10000",
                    "INFLUENCER_STATS_SHARE": args.share,
                    "INFLUENCER_STATS_SHARE_PROXIES": "1",
                    "INFLUENCER_STATS_DB": str(logs / "db.sqlite3"),
                },
            )
            with running(installed_argv("youtube", port), logs / "service.log", env=env) as service:
                wait_until_ok(port, "/healthz", service, logs / "service.log")
                alone, beside, seen = asyncio.run(
                    _measure(f"http://127.0.0.1:{port}", args.asks, args.hammerers)
                )
    p50_alone, p50_beside = statistics.median(alone), statistics.median(beside)
    print(f"client B uncached p50 alone:  {p50_alone * 1000:.1f} ms ({len(alone)} asks)")
    print(f"client B uncached p50 beside: {p50_beside * 1000:.1f} ms ({len(beside)} asks)")
    print(f"ratio: {p50_beside / p50_alone:.2f} (target < 2)")
    print(f"client A ({args.hammerers} loops, share {args.share}) was answered: {dict(sorted(seen.items()))}")


if __name__ == "__main__":
    main()
