"""Load and fault soak: the `fast` profile under load while YouTube misbehaves and writers write.

    python perf/soak.py --duration 60 --connections 256 [--report perf/RESULTS.md] [--short]

What it does, all on 127.0.0.1 and bounded in time:

1. starts the project's YouTube double (it has switchable faults) and the service (``--profile fast``,
   on a client that calls YouTube: ``perf.profiles.calling_youtube``) pointed at it;
2. seeds ``--collections`` collections, then for ``--duration`` s runs ``wrk -c<connections>`` on their stats while
   - a fault cycler switches the double through quota, 5xx, stall, malformed
     JSON and connection resets (and back to healthy), and
   - one writer per collection keeps replacing it, remembering each value written and the last acknowledged;
   - hostile clients attack at the same time: ``--pipeliners`` connections
     pipeline GETs of a big collection (100 calls' worth: ``big_collection``) and never read, and
     ``--slowloris`` connections trickle one header line a second, while a
     liveness probe calls ``/healthz`` on a fresh connection every 250 ms;
3. then checks the invariants: no 500, no socket error, every collection
   equals the last value acknowledged for it (nothing lost, nothing torn),
   event-loop lag below ``--max-lag``, RSS grown by at most
   ``--max-rss-growth`` MB, every liveness probe answered 200, every slowloris
   connection closed by the server (its header timeout is set to
   ``--header-timeout`` s); and reports requests by status, p99, max loop
   lag, RSS before and after, dropped log events;
4. runs the quota phases (``perf/soak_phases.py``, the ``youtube`` profile), each as installed: new
   ids asked for with the budget spent (RSS flat), big collections asked for again and again against
   a slow YouTube (quota units spent equal to units of work), ``--phase-seconds`` each; one-video
   requests beside big ones (all answered, latency reported); refresh storms (``soak_refreshes``).

Exit 0 when every invariant holds, 1 otherwise (the report says which), 2
for missing tools. ``--short`` is the CI version (a few seconds, 64
connections); it asserts invariants, never a speed. With ``--report`` the
numbers replace the ``## Soak under faults`` section of that file.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from influencer_stats.interpreters.videos.synthetic import synthetic_video_id
from perf.attacks import AttackLog, attack
from perf.procs import HOST, ROOT, LabError, free_port, memory_of_tree, running, wait_until_ok
from perf.profiles import big_collection, calling_youtube
from perf.report import SOAK_HEADING
from perf.report_sections import write_section
from perf.service import installed_argv, service_env
from perf.soak_phases import PhaseResult, render_phases, run_phases
from perf.upstream import python_double
from perf.wrk import WRK, WrkError, WrkResult, run_wrk

SCRIPT = ROOT / "perf" / "soak.lua"
"""wrk's script: GETs spread over the stats routes, answers counted by status (a ``SOAK_STATUS`` line)."""
FAULTS = ("quota", "server_error", "stall", "malformed", "reset", "none")
BIG = "soak-big"  # perf.profiles.big_collection ids: what the pipelining client asks for again and again
EXPECTED = {"502": "5xx, malformed or reset upstream", "503": "quota", "504": "stalled upstream"}
LAG, DROPPED = "influencer_stats_event_loop_lag_seconds", "influencer_stats_log_events_dropped"  # by hand


@dataclass
class WriterLog:
    """What one writer did to its collection."""

    written: list[tuple[str, ...]] = field(default_factory=list)
    acknowledged: tuple[str, ...] | None = None
    statuses: dict[int, int] = field(default_factory=dict)


@dataclass
class SoakResult:
    duration_s: float
    connections: int
    statuses: dict[str, int]
    socket_errors: str
    requests: int
    p99_ms: float | None
    max_ms: float
    writes: int
    write_statuses: dict[int, int]
    max_loop_lag_s: float
    rss_before_mb: float
    rss_after_mb: float
    logs_dropped: float
    faults_cycled: list[str]
    breaker_cooldown_s: float
    header_timeout_s: float
    big_ids: int
    attacks: AttackLog
    phases: PhaseResult
    violations: list[str]


def rss_mb(pid: int) -> float:
    """The server's resident memory, worker processes included (Granian forks one)."""
    return memory_of_tree(pid).rss_mb


def metric(text: str, name: str) -> float:
    """The sum of every sample of ``name`` (any labels) in a Prometheus scrape."""
    return sum(float(m.group(1)) for m in re.finditer(rf"^{name}(?:\{{[^}}]*\}})? (\S+)$", text, re.M))


def max_loop_lag(text: str) -> float:
    """The smallest histogram bound that holds every loop-lag observation."""
    count = metric(text, f"{LAG}_count")
    for bound, value in re.findall(rf'^{LAG}_bucket\{{le="([^"]+)"\}} (\S+)$', text, re.M):
        if float(value) >= count:
            return float(bound)
    return float("inf") if count else float("nan")  # nan: no histogram to read (--metrics none)


async def writer(client: httpx.AsyncClient, cid: str, log: WriterLog, stop_at: float, seed: int) -> None:
    for n in itertools.count():
        if time.monotonic() >= stop_at:
            return
        value = tuple(synthetic_video_id(seed * 100_000 + n * 3 + k) for k in range(1 + n % 3))
        log.written.append(value)
        try:
            response = await client.put(f"/collections/{cid}", json={"videos": list(value)})
        except httpx.TransportError:
            log.statuses[-1] = log.statuses.get(-1, 0) + 1
            continue
        log.statuses[response.status_code] = log.statuses.get(response.status_code, 0) + 1
        if response.status_code in (200, 201):
            log.acknowledged = value
        await asyncio.sleep(0.01)  # pacing: about 100 writes/s per writer, not a timing assumption


async def cycle_faults(double: str, stop_at: float, period: float, seen: list[str]) -> None:
    async with httpx.AsyncClient(base_url=double, timeout=5) as client:
        for mode in itertools.cycle(FAULTS):
            if time.monotonic() >= stop_at:
                break
            body: dict[str, object] = {"mode": mode}
            if mode == "stall":
                body["stall_seconds"] = 1.5
            await client.post("/_control/fault", json=body)
            seen.append(mode)
            await asyncio.sleep(min(period, max(0.0, stop_at - time.monotonic())))
        await client.post("/_control/fault", json={"mode": "none"})


async def drive(
    url: str, double: str, cids: list[str], args: argparse.Namespace, port: int
) -> tuple[list[WriterLog], list[str], WrkResult, str, AttackLog]:
    """wrk on the stats routes, the writers, the fault cycler and the attackers, for ``--duration`` seconds."""
    stop_at = time.monotonic() + args.duration
    logs = [WriterLog() for _ in cids]
    seen: list[str] = []
    wrk = asyncio.create_task(
        asyncio.to_thread(
            run_wrk,
            url,
            threads=1,
            connections=args.connections,
            duration_s=args.duration,
            script=SCRIPT,
            timeout_s=5,
            script_args=[f"/collections/{c}/stats" for c in cids],
        )
    )
    attacks = asyncio.create_task(
        attack(url, port, f"/collections/{BIG}", stop_at, args.pipeliners, args.slowloris)
    )
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:
        await asyncio.gather(
            *(writer(client, c, log, stop_at, i) for i, (c, log) in enumerate(zip(cids, logs, strict=True))),
            cycle_faults(double, stop_at, args.fault_period, seen),
        )
    result, text = await wrk
    return logs, seen, result, text, await attacks


def check_attacks(attacks: AttackLog, rss_growth: float, args: argparse.Namespace) -> list[str]:
    """The server under hostile clients: memory flat, liveness answered, slow clients cut off."""
    violations: list[str] = []
    if rss_growth > args.max_rss_growth:
        violations.append(f"RSS grew by {rss_growth:.0f} MB (limit {args.max_rss_growth:g} MB)")
    failed = [(s, t) for s, t in attacks.health if s != 200]
    if failed or not attacks.health:
        violations.append(f"{len(failed)} of {len(attacks.health)} liveness probes did not answer 200")
    if args.duration >= 3 * args.header_timeout and attacks.slow_closed_by_server < attacks.slow_connections:
        kept = attacks.slow_connections - attacks.slow_closed_by_server
        violations.append(
            f"{kept} slowloris connections outlived the {args.header_timeout:g} s header timeout"
        )
    return violations


def check(
    url: str,
    cids: list[str],
    logs: list[WriterLog],
    statuses: dict[str, int],
    socket_errors: int,
    lag: float,
    limit: float,
    faults_seen: list[str],
) -> list[str]:
    violations: list[str] = []
    if set(FAULTS) <= set(faults_seen):
        # Every fault ran at least once: each must have reached a client as its own status.
        for status, meaning in EXPECTED.items():
            if not statuses.get(status):
                violations.append(f"no {status} answer ({meaning}) although every fault ran")
    if statuses.get("500"):
        violations.append(f"{statuses['500']} answers were 500")
    if socket_errors:
        violations.append(f"{socket_errors} socket errors")
    if lag > limit:
        violations.append(f"event-loop lag reached {lag:g}s (limit {limit:g}s)")
    with httpx.Client(base_url=url, timeout=10) as client:
        for cid, log in zip(cids, logs, strict=True):
            stored = tuple(client.get(f"/collections/{cid}").json()["videos"])
            if stored not in log.written:
                violations.append(f"{cid}: stored value was never written (torn write)")
            elif stored != log.acknowledged:
                violations.append(f"{cid}: stored value is not the last acknowledged write (lost write)")
            if log.statuses.get(500):
                violations.append(f"{cid}: {log.statuses[500]} writes answered 500")
    return violations


def run(args: argparse.Namespace) -> SoakResult:
    work = Path(tempfile.mkdtemp(prefix="soak-"))
    port, log = free_port(), work / "service.log"
    url = f"http://{HOST}:{port}"
    with python_double(work) as double:
        env = service_env(
            double.url,
            "soak-dummy-key",
            {
                "INFLUENCER_STATS_CACHE_TTL": str(args.cache_ttl),
                "INFLUENCER_STATS_LIMIT_CONCURRENCY": "4096",
                "INFLUENCER_STATS_BREAKER_COOLDOWN": str(args.breaker_cooldown),
                "INFLUENCER_STATS_HEADER_TIMEOUT": str(args.header_timeout),
            },
        )
        with running(installed_argv("fast", port, calling_youtube("fast")), log, env=env) as service:
            wait_until_ok(port, "/healthz", service, log)
            cids = [f"soak-{n}" for n in range(args.collections)]
            with httpx.Client(base_url=url) as client:
                for n, cid in enumerate(cids):
                    client.put(f"/collections/{cid}", json={"videos": [synthetic_video_id(n)]})
                    client.get(f"/collections/{cid}/stats")
                big = [synthetic_video_id(1_000_000 + n) for n in range(big_collection("fast"))]
                client.put(f"/collections/{BIG}", json={"videos": big})
            before = rss_mb(service.pid)
            print(
                f"soak: {args.duration}s, {args.connections} connections, {len(cids)} collections",
                file=sys.stderr,
            )
            logs, seen, result, wrk_out, attacks = asyncio.run(drive(url, double.base_url, cids, args, port))
            after = rss_mb(service.pid)
            scrape = httpx.get(url + "/metrics").text
            status_line = re.search(r"^SOAK_STATUS (\{.*\})$", wrk_out, re.M)
            statuses = json.loads(status_line.group(1)) if status_line else {}
            lag = max_loop_lag(scrape)
            violations = check(url, cids, logs, statuses, result.socket_errors.total, lag, args.max_lag, seen)
            violations += check_attacks(attacks, after - before, args)
    phases = run_phases(work, seconds=args.phase_seconds, clients=4, max_rss_growth_mb=args.max_rss_growth)
    write_statuses: dict[int, int] = {}
    for writes in logs:
        for status, n in writes.statuses.items():
            write_statuses[status] = write_statuses.get(status, 0) + n
    return SoakResult(
        duration_s=args.duration,
        connections=args.connections,
        statuses=dict(sorted(statuses.items())),
        socket_errors=str(result.socket_errors),
        requests=result.requests,
        p99_ms=result.p99_ms,
        max_ms=result.max_ms,
        writes=sum(len(writes.written) for writes in logs),
        write_statuses=dict(sorted(write_statuses.items())),
        max_loop_lag_s=lag,
        rss_before_mb=before,
        rss_after_mb=after,
        logs_dropped=metric(scrape, f"{DROPPED}_total"),
        faults_cycled=seen,
        breaker_cooldown_s=args.breaker_cooldown,
        header_timeout_s=args.header_timeout,
        big_ids=len(big),
        attacks=attacks,
        phases=phases,
        violations=violations + phases.violations,
    )


def render(result: SoakResult, command: str) -> str:
    statuses = ", ".join(f"{s}: {n:,}" for s, n in result.statuses.items()) or "none"
    writes = ", ".join(f"{s}: {n:,}" for s, n in result.write_statuses.items())
    verdict = (
        "all invariants held" if not result.violations else "VIOLATIONS: " + "; ".join(result.violations)
    )
    p99 = "n/a" if result.p99_ms is None else f"{result.p99_ms:.2f} ms"
    return "\n".join(
        [
            SOAK_HEADING,
            "",
            f"`{command}` — the `fast` profile, {result.connections} connections for {result.duration_s:g} s on the "
            "stats routes, the YouTube double cycling through faults, one writer per collection.",
            "",
            "| what | value |",
            "|---|---|",
            f"| stats requests | {result.requests:,} |",
            f"| by status | {statuses} |",
            f"| socket errors (connect/read/write/timeout) | {result.socket_errors} |",
            f"| p99 / max latency | {p99} / {result.max_ms:.2f} ms |",
            f"| writes (by status) | {result.writes:,} ({writes}) |",
            f"| max event-loop lag (histogram bound) | {result.max_loop_lag_s:g} s |",
            f"| RSS before → after | {result.rss_before_mb:.1f} → {result.rss_after_mb:.1f} MB |",
            f"| log events dropped | {result.logs_dropped:,.0f} |",
            f"| faults cycled | {', '.join(result.faults_cycled)} |",
            f"| pipelined requests never read | {result.attacks.pipelined_requests:,} |",
            f"| slowloris connections / closed by the server | {result.attacks.slow_connections:,} / "
            f"{result.attacks.slow_closed_by_server:,} |",
            f"| liveness probes: 200 / all, slowest | {_health(result.attacks)} |",
            *render_phases(result.phases),
            f"| verdict | {verdict} |",
            "",
            "Non-2xx answers are the faults doing their work: 503 for quota, 502 for 5xx/malformed/reset, "
            "504 for the stall; the circuit breaker, failing fast after repeated failures, answers with the "
            f"error that opened it. Its cool-down is {result.breaker_cooldown_s:g} s here (5 s by default), "
            "shorter than a fault period, so every fault reaches clients as its own status (an invariant). "
            "Each writer replaces its collection every 10 ms, which invalidates its cached stats, so "
            "stale-if-error rarely has a value to fall back on here. Meanwhile hostile clients attack: "
            f"connections that pipeline GETs of a {result.big_ids:,}-id collection and never read, and "
            "slowloris connections trickling a header line a second (the service's header timeout set to "
            f"{result.header_timeout_s:g} s), while a liveness probe calls /healthz on a fresh connection every "
            "250 ms. The invariants are what must hold.",
            "",
        ]
    )


def _health(attacks: AttackLog) -> str:
    ok = sum(1 for status, _ in attacks.health if status == 200)
    slowest = max((t for _, t in attacks.health), default=0.0)
    return f"{ok:,} / {len(attacks.health):,}, {slowest * 1000:.0f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--duration", type=int, default=60)
    parser.add_argument("--connections", type=int, default=256)
    parser.add_argument("--collections", type=int, default=8)
    parser.add_argument("--fault-period", type=float, default=2.0, help="seconds per fault mode")
    parser.add_argument("--cache-ttl", type=float, default=1.0, help="short, so misses meet the faults")
    parser.add_argument(
        "--breaker-cooldown",
        type=float,
        default=0.5,
        help="seconds the circuit stays open; shorter than a fault period, so every fault shows",
    )
    parser.add_argument("--max-lag", type=float, default=1.0, help="event-loop lag limit, seconds")
    parser.add_argument("--pipeliners", type=int, default=4, help="connections pipelining without reading")
    parser.add_argument("--slowloris", type=int, default=200, help="connections trickling header lines")
    parser.add_argument("--header-timeout", type=float, default=2.0, help="the service's header timeout, s")
    parser.add_argument("--max-rss-growth", type=float, default=64.0, help="RSS growth limit, MB")
    parser.add_argument("--phase-seconds", type=float, default=20.0, help="each quota phase (soak_phases)")
    parser.add_argument("--report", type=Path)
    parser.add_argument("--short", action="store_true", help="CI: 6 s, 64 connections")
    args = parser.parse_args(argv)
    if args.short:
        args.duration, args.connections, args.fault_period, args.slowloris = 6, 64, 1.0, 50
        args.phase_seconds = 6.0
    if shutil.which(WRK) is None:
        print("soak: wrk is missing: apt-get install wrk (Debian) or run scripts/perf-up.sh", file=sys.stderr)
        return 2
    command = "python perf/soak.py " + " ".join(argv if argv is not None else sys.argv[1:])
    try:
        result = run(args)
    except (LabError, WrkError) as error:
        print(f"soak: {error}", file=sys.stderr)
        return 1
    section = render(result, command.strip())
    print(section)
    if args.report:
        write_section(args.report, SOAK_HEADING, section)
    return 0 if not result.violations else 1


if __name__ == "__main__":
    sys.exit(main())
