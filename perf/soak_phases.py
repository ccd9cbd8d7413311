"""The soak's quota phases: the `youtube` profile (per-video cache, batching, the call gate, the governor).

Each phase runs its own service against its own Python double, all on 127.0.0.1 and bounded
in time, and checks what issue 22 found broken:

- **asked-for ids**: the day's budget is spent (a budget of one unit, spent first), and
  ``clients`` concurrent clients write collections of 5,000 new ids and ask for their stats
  over and over: every answer is a ``503 quota-exhausted`` and the server's RSS stays flat
  (the video cache kept every id it could not fetch: 56 → 454 MB in 25 s before);
- **timed-out calls**: YouTube takes ``latency`` per call through 16 connections, so a
  5,000-id collection needs more than the 2 s deadline; ``clients`` clients per collection
  ask for its stats over and over (504 until its calls have landed, then 200). Once the
  calls settle, the units spent (the double's count of calls) must equal the units of work:
  one per 50 distinct ids (each timed-out ask paid for its calls again before: 5 asks, 500
  units for 100);
- **small beside big**: one-video requests alone, then beside twenty 5,000-video ones, 100 ms
  a call: every one answered (all 504 at 2 s before, behind 2,000 calls), and their latency
  reported (how well the call gate shares the connections);
- **refresh storms** (``perf/soak_refreshes.py``): PUTs of ids and DELETEs beside refreshes, the
  refresher every second on two workers: nothing acknowledged lost, no source key orphaned.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import httpx

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from influencer_stats.interpreters.youtube.youtube_api import MAX_IDS_PER_CALL
from perf.procs import HOST, free_port, memory_of_tree, running, wait_until_ok
from perf.profiles import budgeted, stand_ins
from perf.service import installed_argv, pooled, service_env
from perf.soak_refreshes import refresh_storm_phase, refreshes_installed
from perf.upstream import python_double

BIG = 5_000
#: Why a phase that measures the youtube profile's own stack is left out (a slice of it removed).
NOT_WHOLE = "the youtube profile runs here on stand-ins (perf.profiles.stand_ins: a slice of it removed)"
#: Why the phase of a spent budget is left out (no quota ledger installed).
NO_BUDGET = "the youtube profile counts no budget here (perf.profiles.budgeted: no quota ledger installed)"
QUOTA_EXHAUSTED = "urn:influencer-stats:problem:quota-exhausted"


@dataclass
class PhaseResult:
    """What one phase did (rows of the report's table) and which invariants it broke."""

    rows: list[tuple[str, str]]
    violations: list[str]


def _videos(first: int, count: int = BIG) -> list[str]:
    return [synthetic_video_id(first + n) for n in range(count)]


def asked_ids_phase(work: Path, seconds: float, clients: int, max_rss_growth_mb: float) -> PhaseResult:
    """New ids asked for while every call fails: answers 503, RSS flat."""
    with python_double(work) as double:
        port = free_port()
        env = service_env(
            double.url, "soak-key", {"INFLUENCER_STATS_QUOTA_PER_DAY": "1", **_own_db(work, "asked")}
        )
        log = work / "service-asked-ids.log"
        with running(installed_argv("youtube", port), log, env=env) as service:
            wait_until_ok(port, "/healthz", service, log)
            url = f"http://{HOST}:{port}"
            with httpx.Client(base_url=url, timeout=30) as client:  # spend the day's one unit
                client.put("/collections/warm", json={"videos": _videos(0, 1)})
                client.get("/collections/warm/stats")
            asyncio.run(_ask_new(url, clients, seconds=min(2.0, seconds / 4), first=1_000_000))  # settle
            before = memory_of_tree(service.pid).rss_mb
            statuses, rounds = asyncio.run(_ask_new(url, clients, seconds=seconds, first=100_000_000))
            after = memory_of_tree(service.pid).rss_mb
    violations = []
    if set(statuses) != {"503 quota-exhausted"}:
        violations.append(f"asked-for ids: answers other than 503 quota-exhausted: {dict(statuses)}")
    if after - before > max_rss_growth_mb:
        violations.append(
            f"asked-for ids: RSS grew by {after - before:.0f} MB (limit {max_rss_growth_mb:g} MB)"
        )
    rows = [
        (
            "asked-for ids: rounds of 5,000 new ids written and asked for, budget spent",
            f"{rounds:,} by {clients} clients in {seconds:g} s ({rounds * BIG:,} ids)",
        ),
        ("asked-for ids: answers", ", ".join(f"{s}: {n:,}" for s, n in sorted(statuses.items()))),
        ("asked-for ids: RSS before → after", f"{before:.1f} → {after:.1f} MB"),
    ]
    return PhaseResult(rows, violations)


async def _ask_new(url: str, clients: int, *, seconds: float, first: int) -> tuple[Counter[str], int]:
    """``clients`` clients, each writing its collection anew with 5,000 new ids and asking for its
    stats, until ``seconds`` pass; the answers by status (and problem type), and the rounds."""
    stop_at = time.monotonic() + seconds
    statuses: Counter[str] = Counter()
    numbers = itertools.count(first, BIG)
    rounds = 0

    async def client_loop(client: httpx.AsyncClient, name: str) -> None:
        nonlocal rounds
        while time.monotonic() < stop_at:
            await client.put(f"/collections/{name}", json={"videos": _videos(next(numbers))})
            reply = await client.get(f"/collections/{name}/stats")
            kind = reply.json().get("type", "") if reply.status_code >= 400 else ""
            statuses[f"{reply.status_code} {kind.rpartition(':')[2]}".strip()] += 1
            rounds += 1

    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        await asyncio.gather(*(client_loop(client, f"asked-{n}") for n in range(clients)))
    return statuses, rounds


def timeouts_phase(
    work: Path, seconds: float, collections: int, clients: int, latency_ms: int
) -> PhaseResult:
    """Big collections asked for again and again against a slow YouTube: units spent = units of work."""
    with python_double(work, latency_ms=latency_ms) as double:
        port = free_port()
        settings = {
            "INFLUENCER_STATS_UPSTREAM_CONNECTIONS": "16",
            "INFLUENCER_STATS_QUOTA_PER_DAY": "10000",
            **_own_db(work, "timeouts"),
        }
        env = service_env(double.url, "soak-key", settings)
        log = work / "service-timeouts.log"
        with running(installed_argv("youtube", port), log, env=env) as service:
            wait_until_ok(port, "/healthz", service, log)
            url = f"http://{HOST}:{port}"
            with httpx.Client(base_url=url, timeout=30) as client:
                for n in range(collections):
                    client.put(f"/collections/big-{n}", json={"videos": _videos(n * BIG)})
            statuses = asyncio.run(_ask_again(url, collections, clients, seconds))
            spent = _settled_calls(double.base_url, timeout_s=30.0)
            with httpx.Client(base_url=url, timeout=30) as client:
                last = Counter(
                    client.get(f"/collections/big-{n}/stats").status_code for n in range(collections)
                )
            spent_after = _calls(double.base_url)
    work_units = collections * -(-BIG // MAX_IDS_PER_CALL)
    violations = []
    if spent != work_units or spent_after != spent:
        violations.append(
            f"timed-out calls: {spent_after:,} quota units spent for {work_units:,} units of work"
        )
    if set(statuses) - {200, 504}:
        violations.append(f"timed-out calls: answers other than 200 and 504: {dict(statuses)}")
    if last != Counter({200: collections}):
        violations.append(
            f"timed-out calls: once the calls landed, the answers were {dict(last)}, not all 200"
        )
    rows = [
        (
            "timed-out calls: asks of 5,000-id collections, YouTube slow",
            f"{sum(statuses.values()):,} asks of {collections} collections by {clients} clients each "
            f"in {seconds:g} s, {latency_ms} ms a call, 16 connections "
            f"({', '.join(f'{s}: {n:,}' for s, n in sorted(statuses.items()))})",
        ),
        ("timed-out calls: quota units spent / units of work", f"{spent_after:,} / {work_units:,}"),
    ]
    return PhaseResult(rows, violations)


async def _ask_again(url: str, collections: int, clients: int, seconds: float) -> Counter[int]:
    stop_at = time.monotonic() + seconds
    statuses: Counter[int] = Counter()

    async def client_loop(client: httpx.AsyncClient, n: int) -> None:
        while time.monotonic() < stop_at:
            statuses[(await client.get(f"/collections/big-{n}/stats")).status_code] += 1

    limits = pooled(collections * clients)
    async with httpx.AsyncClient(base_url=url, timeout=30, limits=limits) as client:
        await asyncio.gather(*(client_loop(client, n) for n in range(collections) for _ in range(clients)))
    return statuses


def _calls(double: str) -> int:
    return int(httpx.get(double + "/_control/stats", timeout=10).json()["calls"])


def _settled_calls(double: str, timeout_s: float) -> int:
    """The double's count of calls once it stays the same for a second (bounded by ``timeout_s``)."""
    deadline = time.monotonic() + timeout_s
    seen = _calls(double)
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now = _calls(double)
        if now == seen:
            return now
        seen = now
    return seen


def small_beside_big_phase(work: Path, *, big: int, small: int, latency_ms: int) -> PhaseResult:
    """One-video requests alone, then beside ``big`` 5,000-video ones: all answered; their latency
    (the measure of the call gate's shares: a speed, reported, never an invariant)."""
    with python_double(work, latency_ms=latency_ms) as double:
        port = free_port()
        settings = {
            "INFLUENCER_STATS_QUOTA_PER_DAY": "0",
            "INFLUENCER_STATS_CACHE_TTL": "0.001",
            **_own_db(work, "small-beside-big"),
        }
        env = service_env(double.url, "soak-key", settings)
        log = work / "service-small-beside-big.log"
        with running(installed_argv("youtube", port), log, env=env) as service:
            wait_until_ok(port, "/healthz", service, log)
            url = f"http://{HOST}:{port}"
            with httpx.Client(base_url=url, timeout=30) as client:
                for n in range(big):
                    client.put(f"/collections/big-{n}", json={"videos": _videos(n * BIG)})
                for n in range(2 * small):
                    client.put(f"/collections/small-{n}", json={"videos": _videos(900_000_000 + n, 1)})
            alone, beside, bigs = asyncio.run(_small_and_big(url, big, small))
    answered = Counter(status for status, _ in beside)
    violations = []
    if answered != Counter({200: small}) or any(status != 200 for status, _ in alone):
        violations.append(f"small beside big: one-video requests answered {dict(answered)}, not all 200")
    rows = [
        (
            f"small beside big: {small} one-video requests alone, then beside {big} of 5,000 videos "
            f"({latency_ms} ms a call)",
            f"p50 {_p50_ms(alone):.0f} ms alone, {_p50_ms(beside):.0f} ms beside them (max "
            f"{max(t for _, t in beside) * 1000:.0f} ms); the big ones: "
            f"{', '.join(f'{s}: {n}' for s, n in sorted(Counter(bigs).items()))}",
        ),
    ]
    return PhaseResult(rows, violations)


async def _small_and_big(
    url: str, big: int, small: int
) -> tuple[list[tuple[int, float]], list[tuple[int, float]], list[int]]:
    async def timed(client: httpx.AsyncClient, path: str) -> tuple[int, float]:
        started = time.monotonic()
        status = (await client.get(path)).status_code
        return status, time.monotonic() - started

    limits = pooled(big + small + 8)
    async with httpx.AsyncClient(base_url=url, timeout=30, limits=limits) as client:
        alone = await asyncio.gather(*(timed(client, f"/collections/small-{n}/stats") for n in range(small)))
        bigs = [asyncio.create_task(client.get(f"/collections/big-{n}/stats")) for n in range(big)]
        await asyncio.sleep(0.3)  # the big requests' calls are queued by now (pacing)
        beside = await asyncio.gather(
            *(timed(client, f"/collections/small-{small + n}/stats") for n in range(small))
        )
        return list(alone), list(beside), [r.status_code for r in await asyncio.gather(*bigs)]


def _p50_ms(timed: list[tuple[int, float]]) -> float:
    ordered = sorted(t for _, t in timed)
    return ordered[len(ordered) // 2] * 1000


def run_phases(work: Path, *, seconds: float, clients: int, max_rss_growth_mb: float) -> PhaseResult:
    """The four phases, one after the other (timed-out calls: 3 collections at 300 ms a call;
    small beside big: 20 big requests and 20 small ones at 100 ms a call; refresh storms: 50
    collections, ``perf/soak_refreshes.py``, when the route is installed: the ``sources`` slice)."""
    if budgeted("youtube"):  # a budget to spend: a quota ledger installed (the quota slice)
        phases = [asked_ids_phase(work, seconds, clients, max_rss_growth_mb)]
    else:
        phases = [PhaseResult([("asked-for ids", f"not run: {NO_BUDGET}")], [])]
    if not stand_ins("youtube"):  # what a timed-out ask's calls cost is the video cache's (shared misses)
        phases.append(timeouts_phase(work, seconds, collections=3, clients=2, latency_ms=300))
    else:
        phases.append(PhaseResult([("timed-out calls", f"not run: {NOT_WHOLE}")], []))
    phases.append(small_beside_big_phase(work, big=20, small=20, latency_ms=100))
    if refreshes_installed():
        phases.append(PhaseResult(*refresh_storm_phase(work, seconds, collections=50)))
    return PhaseResult([row for p in phases for row in p.rows], [v for p in phases for v in p.violations])


def render_phases(result: PhaseResult) -> list[str]:
    """The phases' rows of the soak's table."""
    return [f"| {what} | {value} |" for what, value in result.rows]


def _own_db(work: Path, phase: str) -> dict[str, str]:
    """A database file of the phase's own (the `youtube` profile's store is SQLite): none reads
    collections another phase, or an earlier run, wrote into the checkout's data/."""
    return {"INFLUENCER_STATS_DB": str((work / f"{phase}.sqlite3").resolve())}
