"""The lab's command line: ``perf/run.py``'s flags, checked and resolved into :class:`Options`."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from perf.model import Settings
from perf.procs import LOAD_CPU, SERVER_CPU
from perf.references import CHOSEN
from perf.specs import split_profiles, unknown_profiles
from perf.upstream import NGINX
from perf.workload import COLLECTION_CHOICES

#: Where the committed record lives; a run writes there only with ``--publish``.
PUBLISHED: Final = Path("perf")
DESCRIPTION: Final = "The perf lab: every profile under the same wrk load, a flame graph each, one report."
EPILOG: Final = (
    "Other workloads: `perf/run.py --workload overlap [--rate 200 --duration 60 --seed 1]` (the quota "
    "economy: overlapping collections, units spent per profile; `perf/run.py --workload overlap --help`), "
    "`perf/soak.py` (a soak under faults)."
)
DEFAULT_PROFILES: Final = "v1,v2,v3,v4,v5,fast"
SHORT: Final = {"duration": 2, "warmup": 1, "flame_duration": 2}
DEFAULTS: Final = {"duration": 30, "warmup": 5}


@dataclasses.dataclass(frozen=True, slots=True)
class Options:
    profiles: list[str]
    settings: Settings
    out: Path
    report: Path
    flames: Path
    chart: Path
    nginx: str
    reference: str = "auto"
    """``--reference``: ``auto`` (each profile beside its server's reference), ``guarded``, or a
    profile spec every profile is measured beside (``fast``)."""


def parse_args(argv: Sequence[str]) -> Options:
    """The options of ``perf/run.py ARGV``; exits 2 (argparse) on bad arguments."""
    parser = argparse.ArgumentParser(prog="perf/run.py", description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument(
        "--profiles",
        default=DEFAULT_PROFILES,
        help=f"comma-separated ({DEFAULT_PROFILES}); a variant overrides choices: fast+cache=none "
        "(a list choice keeps its commas: fast+store=redis+cache=near,redis)",
    )
    parser.add_argument("--duration", type=int, help="seconds of measured load per profile (30; --short: 2)")
    parser.add_argument("--warmup", type=int, help="seconds of warm-up load before it (5; --short: 1)")
    parser.add_argument("--threads", type=int, default=1, help="wrk threads (1)")
    parser.add_argument("--connections", type=int, default=16, help="wrk connections (16)")
    parser.add_argument("--collection", choices=COLLECTION_CHOICES, default="original")
    parser.add_argument("--out", type=Path, default=Path("perf/out"), help="logs, raw outputs, results.json")
    parser.add_argument("--report", type=Path, help="the report (OUT/RESULTS.md; --publish: perf/RESULTS.md)")
    parser.add_argument(
        "--flames", type=Path, help="flame graph SVGs go here (OUT/flames; --publish: perf/flames)"
    )
    parser.add_argument("--chart", type=Path, help="the chart (OUT/chart.png; --publish: perf/chart.png)")
    parser.add_argument(
        "--publish",
        action="store_true",
        help="update the committed record (perf/RESULTS.md, perf/flames, perf/chart.png) instead of OUT",
    )
    parser.add_argument(
        "--flame-mode",
        choices=("separate", "concurrent"),
        default="separate",
        help="record the flame graph in a pass after the measured one (default) or during it",
    )
    parser.add_argument("--flame-duration", type=int, help="seconds of the separate flame pass (≤ 10)")
    parser.add_argument("--nginx", default=NGINX, help=f"nginx binary for the double ({NGINX})")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="measure every profile this many times, each time right after its reference (ceiling, "
        "rsgi-ceiling or minimal; or the one --reference names); each row is its median round, each ratio to the reference the median "
        "of the per-round ratios (a shared machine drifts: 5 rounds show by how much)",
    )
    parser.add_argument(
        "--reference",
        default="auto",
        help="what every profile is measured beside: auto (the reference of its server: ceiling, "
        "rsgi-ceiling or minimal), guarded (perf/guarded.py, the service by hand with fast's "
        "guarantees: `guarded` for a profile with a stats cache, `guarded+cache=none` without; "
        "a flame graph of it is recorded too), or a profile spec (fast, fast+workers=1, ...): "
        "measured like a profile right before each profile, its flame graph recorded once",
    )
    parser.add_argument(
        "--pin",
        action="store_true",
        help=f"the servers (every process of one) on CPU {SERVER_CPU}, wrk, the YouTube double, "
        f"redis-server, py-spy and the lab on CPU {LOAD_CPU} (taskset; needs both CPUs)",
    )
    parser.add_argument("--short", action="store_true", help="a few seconds per profile: CI's smoke run")
    args = parser.parse_args(list(argv))

    short = bool(args.short)
    duration = args.duration or (SHORT["duration"] if short else DEFAULTS["duration"])
    warmup = args.warmup if args.warmup is not None else (SHORT["warmup"] if short else DEFAULTS["warmup"])
    flame_duration = args.flame_duration or (SHORT["flame_duration"] if short else min(duration, 10))
    for name, value in (("threads", args.threads), ("connections", args.connections)):
        if value < 1:
            parser.error(f"--{name} must be at least 1")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if duration < 1 or warmup < 0 or flame_duration < 1:
        parser.error("--duration and --flame-duration must be at least 1 s, --warmup at least 0 s")
    if args.connections < args.threads:
        parser.error("wrk needs at least one connection per thread")
    profiles = split_profiles(str(args.profiles))
    if not profiles:
        parser.error("--profiles is empty")
    reference = str(args.reference).strip()
    if reference not in CHOSEN and unknown_profiles([reference]):
        parser.error(f"--reference {reference}: not {', '.join(CHOSEN)} nor a profile spec")
    return Options(
        profiles=list(dict.fromkeys(profiles)),
        settings=Settings(
            threads=args.threads,
            connections=args.connections,
            duration_s=duration,
            warmup_s=warmup,
            flame_duration_s=duration if args.flame_mode == "concurrent" else flame_duration,
            flame_mode=args.flame_mode,
            collection=args.collection,
            short=short,
            rounds=args.rounds,
            pin=bool(args.pin),
        ),
        out=args.out,
        report=args.report or (PUBLISHED / "RESULTS.md" if args.publish else args.out / "RESULTS.md"),
        flames=args.flames or (PUBLISHED / "flames" if args.publish else args.out / "flames"),
        chart=args.chart or (PUBLISHED / "chart.png" if args.publish else args.out / "chart.png"),
        nginx=args.nginx,
        reference=reference,
    )
