"""Another client's uncached p50 alone and beside a client hammering new ids (the ``shares`` slice).

    python -m perf.shares_fairness [--asks 30] [--hammerers 8] [--rounds 3] [--hammer write-ask|ask]
                                   [--share 200/hour] [--latency-ms 20] [--before DIR]
                                   [--shares memory|redis]

Starts the YouTube double (each call delayed ``--latency-ms``) and the service (the ``youtube``
profile, a budget of 10,000 units, ``INFLUENCER_STATS_SHARE``, one trusted proxy so the two
clients differ by ``X-Forwarded-For``). Client A, in a process of its own (as another machine
would be: its answers are not read on B's event loop), first spends its share writing and asking
new ids. Then, ``--rounds`` times, client B writes collections of 50 new ids one at a time and
times each uncached stats answer, alone (A paused), then while ``--hammerers`` concurrent loops of
A, past its share, hammer without pause: ``write-ask`` writes 50 new ids and asks their stats (a
``PUT`` and a refused ``GET`` a turn), ``ask`` only asks the stats of collections of new ids it
wrote before (refused ``GET``s alone: what a refusal costs); ``burn``, the control, sends nothing
but keeps A's process as busy as its client is (what the machine's two cores lose to the load
generator, whatever the service does). Alone and beside alternate, so
whatever else loads the machine weighs on both alike. B asks ``--asks`` times each way in all.

Prints B's p50 both ways, their ratio (the target: below 2) and each round's, what A was answered,
and the service's CPU (its ``/proc`` times) per second and per request of A beside B (less what B's
asks cost alone). With ``--before DIR`` (a checkout of other code, e.g. ``git archive`` of an
earlier commit) a second service runs from there on this interpreter, and each round measures
both in turn: before and after within one run. ``--shares redis`` counts the shares in a
redis-server started for the run (each service under its own prefix). Bounded: every loop stops
when B is done.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from multiprocessing.sharedctypes import Synchronized, SynchronizedArray
from multiprocessing.synchronize import Event
from pathlib import Path

import httpx

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from perf.procs import PYTHON, free_port, running, wait_until_ok
from perf.redis_server import redis_process
from perf.service import installed_argv, service_env

IDS = 50
A_ADDRESS, B_ADDRESS = "198.51.100.7", "203.0.113.9"
#: A's answers counted per service (``KINDS`` each): its stats asks answered 200, 429, anything
#: else; its writes.
OK, REFUSED, OTHER, WRITES = range(4)
KINDS = 4
#: Collections of never-fetched ids A asks again and again in ``ask`` mode, per service.
ASKED = 64
_TICKS = os.sysconf("SC_CLK_TCK")


def _videos(first: int) -> list[str]:
    return [synthetic_video_id(first + n) for n in range(IDS)]


def _cpu_s(pid: int) -> float:
    """The process's user and system CPU seconds so far (``/proc``: Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


async def _ask(client: httpx.AsyncClient, name: str, first: int, forwarded: str) -> tuple[int, float]:
    """Write ``name`` with 50 new ids, then ask its stats: the status and the seconds the ask took."""
    headers = {"x-forwarded-for": forwarded}
    await client.put(f"/collections/{name}", json={"videos": _videos(first)}, headers=headers)
    started = time.perf_counter()
    reply = await client.get(f"/collections/{name}/stats", headers=headers)
    return reply.status_code, time.perf_counter() - started


# Client A: a process of its own, hammering the service ``target`` names (-1: paused).


async def _a_loop(
    clients: Sequence[httpx.AsyncClient],
    loop: int,
    mode: str,
    target: Synchronized[int],
    hammering: Synchronized[int],
    stop: Event,
    seen: SynchronizedArray[int],
) -> None:
    headers = {"x-forwarded-for": A_ADDRESS}
    for n in range(10_000_000):  # bounded; stopped when B is done
        if stop.is_set():
            return
        service = target.value
        if service < 0:
            await asyncio.sleep(0.005)  # paused while B asks alone
            continue
        client = clients[service]
        if mode == "burn" and hammering.value:  # the control: A's CPU, and no request at all
            until = time.perf_counter() + 0.002
            while time.perf_counter() < until:
                pass
            await asyncio.sleep(0)
            continue
        if mode == "ask" and hammering.value:
            reply = await client.get(f"/collections/asked-{(loop * 7 + n) % ASKED}/stats", headers=headers)
            status = reply.status_code
        else:
            status, _ = await _ask(
                client, f"a{loop}-{n % 20}", 50_000_000 + (loop * 1_000_000 + n) * IDS, A_ADDRESS
            )
            with seen.get_lock():
                seen[service * KINDS + WRITES] += 1
        with seen.get_lock():
            seen[service * KINDS + (OK if status == 200 else REFUSED if status == 429 else OTHER)] += 1


async def _a(
    urls: Sequence[str],
    loops: int,
    mode: str,
    target: Synchronized[int],
    hammering: Synchronized[int],
    stop: Event,
    ready: Event,
    seen: SynchronizedArray[int],
) -> None:
    limits = httpx.Limits(max_connections=loops + 1, max_keepalive_connections=loops + 1)
    async with (
        httpx.AsyncClient(base_url=urls[0], timeout=30, limits=limits) as first,
        httpx.AsyncClient(base_url=urls[-1], timeout=30, limits=limits) as last,
    ):
        clients = [first, last][: len(urls)]
        for client in clients:  # ``ask``'s collections: new ids never fetched, so never cached
            for n in range(ASKED):
                ids = _videos(90_000_000 + n * IDS)
                await client.put(f"/collections/asked-{n}", json={"videos": ids})
        ready.set()
        await asyncio.gather(
            *(_a_loop(clients, n, mode, target, hammering, stop, seen) for n in range(loops))
        )


def _a_process(*args: object) -> None:
    asyncio.run(_a(*args))  # type: ignore[arg-type]


@dataclass
class Measured:
    """One service's: B's asks alone and beside, per round; A's answers beside; the service's CPU."""

    label: str
    pid: int
    alone: list[list[float]] = field(default_factory=list)
    beside: list[list[float]] = field(default_factory=list)
    a_beside: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    cpu_alone_s: float = 0.0
    cpu_beside_s: float = 0.0
    wall_beside_s: float = 0.0
    a_cpu_s: float = 0.0  # A's own process, beside B


async def _b(client: httpx.AsyncClient, asks: int, first: int) -> list[float]:
    took = []
    for n in range(asks):
        status, seconds = await _ask(client, f"b{first}-{n}", first + n * IDS, B_ADDRESS)
        if status != 200:
            raise SystemExit(f"client B was answered {status}")
        took.append(seconds)
    return took


async def _until(condition: object, seconds: float) -> None:
    for _ in range(int(seconds * 20)):  # bounded
        if condition():  # type: ignore[operator]
            return
        await asyncio.sleep(0.05)
    raise SystemExit("client A was never refused: is its share spent?")


async def _measure(urls: Sequence[str], measured: Sequence[Measured], args: argparse.Namespace) -> list[int]:
    context = multiprocessing.get_context("spawn")
    target, hammering = context.Value("i", -1), context.Value("i", 0)
    stop, ready = context.Event(), context.Event()
    seen = context.Array("q", KINDS * len(urls))
    hammer = context.Process(
        target=_a_process, args=(urls, args.hammerers, args.hammer, target, hammering, stop, ready, seen)
    )
    hammer.start()
    a_pid = hammer.pid
    assert a_pid is not None
    try:
        await _until(ready.is_set, 60)
        for service in range(len(urls)):  # A spends its share on each service first
            target.value = service
            await _until(lambda s=service: seen[s * KINDS + REFUSED] >= args.hammerers, 60)
            target.value = -1
        hammering.value = 1
        per_round = max(1, args.asks // args.rounds)
        for round_ in range(args.rounds):
            for service, (url, m) in enumerate(zip(urls, measured, strict=True)):
                async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                    first = 1_000_000 * (1 + round_ * 4 + service * 2)
                    cpu = _cpu_s(m.pid)
                    m.alone.append(await _b(client, per_round, first))
                    m.cpu_alone_s += _cpu_s(m.pid) - cpu
                    before = list(seen[service * KINDS : (service + 1) * KINDS])
                    target.value = service
                    await asyncio.sleep(0.2)  # A's loops under way
                    cpu, a_cpu, started = _cpu_s(m.pid), _cpu_s(a_pid), time.perf_counter()
                    m.beside.append(await _b(client, per_round, first + 1_000_000))
                    m.cpu_beside_s += _cpu_s(m.pid) - cpu
                    m.a_cpu_s += _cpu_s(a_pid) - a_cpu
                    m.wall_beside_s += time.perf_counter() - started
                    target.value = -1
                    after = list(seen[service * KINDS : (service + 1) * KINDS])
                    m.a_beside = [t + b - a for t, a, b in zip(m.a_beside, before, after, strict=True)]
                    await asyncio.sleep(0.1)  # A's last asks answered
    finally:
        stop.set()
        hammer.join(30)
        if hammer.is_alive():
            hammer.kill()
    return [int(seen[n]) for n in range(len(urls) * KINDS)]


def _report(m: Measured, args: argparse.Namespace) -> None:
    alone = [s for r in m.alone for s in r]
    beside = [s for r in m.beside for s in r]
    p50_alone, p50_beside = statistics.median(alone), statistics.median(beside)
    rounds = [statistics.median(b) / statistics.median(a) for a, b in zip(m.alone, m.beside, strict=True)]
    a_asks = m.a_beside[OK] + m.a_beside[REFUSED] + m.a_beside[OTHER]
    b_ask_cpu_s = m.cpu_alone_s / len(alone)
    a_cpu_s = max(0.0, m.cpu_beside_s - b_ask_cpu_s * len(beside))
    print(f"[{m.label}] client B uncached p50 alone:  {p50_alone * 1000:.1f} ms ({len(alone)} asks)")
    print(f"[{m.label}] client B uncached p50 beside: {p50_beside * 1000:.1f} ms ({len(beside)} asks)")
    print(
        f"[{m.label}] ratio: {p50_beside / p50_alone:.2f} (target < 2); by round: {', '.join(f'{r:.2f}' for r in rounds)}"
    )
    print(
        f"[{m.label}] client A ({args.hammerers} loops, {args.hammer}) beside B, in {m.wall_beside_s:.1f} s: "
        f"{m.a_beside[OK]} answered, {m.a_beside[REFUSED]} refused (429), {m.a_beside[OTHER]} other, "
        f"{m.a_beside[WRITES]} writes"
    )
    a_turn = f"{a_cpu_s / a_asks * 1000:.2f} ms" if a_asks else "-"
    print(
        f"[{m.label}] CPU beside: the service {m.cpu_beside_s / m.wall_beside_s * 100:.0f}% of a core, "
        f"A's process {m.a_cpu_s / m.wall_beside_s * 100:.0f}%; "
        f"B's ask alone {b_ask_cpu_s * 1000:.2f} ms; A's turn (its asks and writes) {a_turn}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--asks", type=int, default=30)
    parser.add_argument("--hammerers", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hammer", choices=("write-ask", "ask", "burn"), default="write-ask")
    parser.add_argument("--share", default="200/hour")
    parser.add_argument("--latency-ms", type=int, default=20)
    parser.add_argument("--before", type=Path, help="a checkout of other code, measured beside this one")
    parser.add_argument(
        "--shares", choices=("memory", "redis"), default="memory", help="where shares are counted"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, ExitStack() as stack:
        logs = Path(folder)
        double_port = free_port()
        double_argv = [
            PYTHON,
            "-m",
            "youtube_double",
            "--port",
            str(double_port),
            "--latency-ms",
            str(args.latency_ms),
        ]
        double = stack.enter_context(running(double_argv, logs / "double.log"))
        wait_until_ok(double_port, "/healthz", double, logs / "double.log")
        redis_env = {}
        if args.shares == "redis":  # one server, each service's counts under its own prefix
            redis_port = stack.enter_context(redis_process(logs / "redis.log"))
            redis_env = {"REDIS_URL": f"redis://127.0.0.1:{redis_port}/0"}
        checkouts: list[tuple[str, Path | None]] = [("after", None)]
        if args.before is not None:
            checkouts.insert(0, ("before", args.before.resolve()))
        urls, measured = [], []
        for label, checkout in checkouts:
            port = free_port()
            env = service_env(
                f"http://127.0.0.1:{double_port}/youtube/v3/videos",
                "any",
                {
                    "INFLUENCER_STATS_QUOTA_PER_DAY": "10000",
                    "INFLUENCER_STATS_SHARE": args.share,
                    "INFLUENCER_STATS_SHARE_PROXIES": "1",
                    "INFLUENCER_STATS_DB": str(logs / f"{label}.sqlite3"),
                    "INFLUENCER_STATS_REDIS_PREFIX": f"fairness-{label}",
                    **redis_env,
                },
            )
            argv = installed_argv("youtube", port, [("shares", args.shares)])
            if checkout is None:
                service = stack.enter_context(running(argv, logs / f"{label}.log", env=env))
            else:  # that checkout's code on this interpreter (its main.py's folder comes first)
                env["PYTHONPATH"] = str(checkout)
                argv = [sys.executable, *argv[1:]]
                service = stack.enter_context(running(argv, logs / f"{label}.log", env=env, cwd=checkout))
            wait_until_ok(port, "/healthz", service, logs / f"{label}.log")
            urls.append(f"http://127.0.0.1:{port}")
            measured.append(Measured(label, service.pid))
        seen = asyncio.run(_measure(urls, measured, args))
    for index, m in enumerate(measured):
        _report(m, args)
        ok, refused, other, _ = seen[index * KINDS : (index + 1) * KINDS]
        print(
            f"[{m.label}] client A in all (share {args.share}): {ok} answered, {refused} refused, {other} other"
        )


if __name__ == "__main__":
    main()
