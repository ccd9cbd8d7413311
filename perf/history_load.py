"""History queries beside collection reads and writes (issue 31), against a running service whose
database ``perf/history_seed.py`` filled (collection ``big``):

1. ``GET /collections/big/history?step=1d``, ``--queries`` times one after another: the time of each;
2. GET and PUT of collections alone, ``--calls`` of each one after another: their median;
3. the same while ``wrk -t1 -c16 -d<--seconds>s`` asks for the history (its answers/s),
   or, without wrk, 16 asyncio clients asking in a loop for as long.

    python perf/history_seed.py /tmp/big.sqlite3
    INFLUENCER_STATS_DB=/tmp/big.sqlite3 python main.py --port 8080 &
    python perf/history_load.py http://127.0.0.1:8080

Every loop is bounded by a count or by ``--seconds``.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import statistics
import time

import httpx

HISTORY = "/collections/big/history?step=1d"


async def _timed(client: httpx.AsyncClient, method: str, path: str, body: object = None) -> float:
    started = time.perf_counter()
    reply = await client.request(method, path, json=body)
    elapsed = time.perf_counter() - started
    if reply.status_code >= 300:
        raise SystemExit(f"{method} {path}: {reply.status_code} {reply.text[:300]}")
    return elapsed


async def _collections(client: httpx.AsyncClient, calls: int) -> dict[str, float]:
    gets = [await _timed(client, "GET", "/collections/big") for _ in range(calls)]
    puts = [
        await _timed(client, "PUT", f"/collections/w{n % 20}", {"videos": ["dQw4w9WgXcQ"]})
        for n in range(calls)
    ]
    return {"get_ms": statistics.median(gets) * 1000, "put_ms": statistics.median(puts) * 1000}


async def _asyncio_load(url: str, seconds: float) -> int:
    """16 clients asking for the history until ``seconds`` pass: the answers."""
    deadline = time.monotonic() + seconds
    answered = 0

    async def one(client: httpx.AsyncClient) -> None:
        nonlocal answered
        while time.monotonic() < deadline:
            await client.get(HISTORY)
            answered += 1

    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        await asyncio.gather(*(one(client) for _ in range(16)))
    return answered


async def measure(url: str, queries: int, calls: int, seconds: float) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        each = [await _timed(client, "GET", HISTORY) for _ in range(queries)]
        print(f"history?step=1d one at a time: median {statistics.median(each):.3f} s, max {max(each):.3f} s")
        alone = await _collections(client, calls)
        print(f"collections alone: GET {alone['get_ms']:.1f} ms, PUT {alone['put_ms']:.1f} ms (median)")
        wrk = shutil.which("wrk")
        if wrk is not None:
            command = [wrk, "-t1", "-c16", f"-d{seconds:g}s", url + HISTORY]
            load = await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.PIPE)
            await asyncio.sleep(0.5)
            busy = await _collections(client, calls)
            out = (await asyncio.wait_for(load.communicate(), seconds + 30))[0].decode()
            rate = re.search(r"Requests/sec:\s+([0-9.]+)", out)
            print(f"{' '.join(command)}: {rate.group(1) if rate else out} answers/s")
        else:
            task = asyncio.create_task(_asyncio_load(url, seconds))
            await asyncio.sleep(0.5)
            busy = await _collections(client, calls)
            print(f"16 asyncio clients for {seconds:g} s: {await task / seconds:.1f} answers/s")
        print(
            f"collections under that load: GET {busy['get_ms']:.1f} ms, PUT {busy['put_ms']:.1f} ms (median)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("url")
    parser.add_argument("--queries", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=5.0)
    options = parser.parse_args()
    asyncio.run(measure(options.url.rstrip("/"), options.queries, options.calls, options.seconds))


if __name__ == "__main__":
    main()
