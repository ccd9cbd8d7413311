"""Quota economy in the lab: the overlapping-campaigns workload, in quota units per 1,000 requests.

    python perf/run.py --workload overlap [--rate 200] [--duration 60] [--seed 1] [--publish]
    python perf/run.py --workload overlap --pool 3000 --collections 300 --sizes 20-200 \
        --clients 32 --requests 12000 --variants 3,4   (issue 33's load: 32 clients, closed loop)
    python perf/overlap.py ...   (the same)

The world (deterministic from ``--seed``): a pool of 20,000 videos; 2,000
collections of 20-500 videos each, drawn with Zipf(1.1) popularity from the
pool (the same popular creators appear in many campaigns); requests pick a
collection with Zipf(1.0). Each variant of the ``youtube`` stack runs as its
own service against the Python YouTube double, from cold, at the same open-loop
rate (or, with ``--clients N``, N clients each asking again once answered: a
closed loop); the double's call counter is the quota spent (one unit per
``videos.list`` call). ``--pool``, ``--collections`` and ``--sizes`` shape the
world. Freshness is the same everywhere: collections and
videos fresh for 10 s. Reported per variant: units per 1,000 stats requests,
req/s answered, latency p50/p99, the age of the answers (``Age``) p50/p99 and
the statuses, the ids a call carried on average, and the floor: the distinct
videos the requests asked for ÷ 50 ids a call, per 1,000 requests (no cache
can spend less on a run within one freshness; a longer run refreshes too). The budget run gives the governor 200 units for the day at
the same load (a quota day is a Pacific calendar day; its reset is unit-tested). Writes ``perf/out/overlap.md`` (and, with
``--publish``, the table into ``perf/RESULTS.md`` between its overlap markers).
Everything listens on 127.0.0.1; every phase is bounded in time.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Final

if __package__ in (None, ""):  # `python perf/overlap.py`: make `perf` importable as a package
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from perf.overlap_world import (
    COLLECTIONS,
    IDS_PER_CALL,
    POOL,
    SIZES,
    Shape,
    Tally,
    World,
    ask,
    put_collections,
    world,
)
from perf.procs import HOST, PYTHON, LabError, free_port, http_get, running, wait_until_ok
from perf.redis_server import answers
from perf.service import installed_argv, service_env

FRESH_S: Final = "10"
BEGIN, END = "<!-- overlap:begin -->", "<!-- overlap:end -->"


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    sentence: str
    flags: tuple[tuple[str, str], ...]
    env: tuple[tuple[str, str], ...] = ()
    replicas: int = 1
    redis: bool = False


VARIANTS: Final = (
    Variant(
        "youtube, today's stack",
        "per-collection stats cache only: two collections sharing 400 videos fetch them twice",
        (("video_cache", "none"), ("video_wrappers", "breaker")),
    ),
    Variant(
        "+ per-video cache",
        "each video is fetched once per TTL whichever collections list it; a fetch asks only for the lacking ids",
        (("video_cache", "memory"), ("video_wrappers", "breaker")),
    ),
    Variant(
        "+ batching",
        "due ids of concurrent requests share calls (2 ms window), without a per-video cache",
        (("video_cache", "none"), ("video_wrappers", "batch,breaker")),
    ),
    Variant(
        "+ both (the youtube profile)",
        "a per-video cache whose misses are batched across requests",
        (("video_cache", "memory"), ("video_wrappers", "batch,breaker")),
    ),
    Variant(
        "distributed, 1 process",
        "Redis store, stats and video caches, the quota counted in Redis",
        (("server", "starlette"),),
        redis=True,
    ),
    Variant(
        "distributed, 2 processes, one Redis",
        "two replicas share the caches: they spend no more than one",
        (("server", "starlette"),),
        replicas=2,
        redis=True,
    ),
    Variant(
        "+ both, budget of 200 units",
        "the governor never lets the day's spending pass 200 units whatever the load: freshness "
        "stretches as spending runs ahead of the day, then the caches serve what they hold "
        "(`Cache-Status: …; detail=quota-exhausted`) and only never-fetched collections get 503",
        (("video_cache", "memory"), ("video_wrappers", "batch,breaker")),
        env=(("INFLUENCER_STATS_QUOTA_PER_DAY", "200"),),
    ),
)


def _calls(port: int) -> tuple[int, int]:
    """The double's videos.list calls so far, and the ids they carried."""
    import json

    status, body = http_get(port, "/_control/stats")
    if status != 200:
        raise LabError(f"the double's counter answered {status}")
    counters = json.loads(body)
    return int(counters["calls"]), int(counters["ids_requested"])


@contextmanager
def _redis(out: Path) -> Iterator[str]:
    port = free_port()
    argv = ["redis-server", "--port", str(port), "--bind", HOST, "--save", "", "--appendonly", "no"]
    with running(argv, out / "overlap-redis.log") as process:
        deadline = time.monotonic() + 10
        while not answers(port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise LabError("redis-server did not answer")
            time.sleep(0.05)
        yield f"redis://{HOST}:{port}/0"


@dataclass(frozen=True, slots=True)
class Row:
    variant: Variant
    requests: int
    units: int
    seconds: float
    tally: Tally
    before: int = 0  # the double's counter when the load began
    saved: str = ""  # calls saved by each wrapper, from the replicas' /metrics
    ids: int = 0  # the ids the load's calls carried
    floor: float = 0.0  # the world's floor, units per 1,000 requests

    def slices(self) -> str:
        """Units spent in each --slice-s of the run (the last slice may be short)."""
        counts = [self.before, *self.tally.counts, self.before + self.units]
        return " / ".join(f"{b - a:,}" for a, b in pairwise(counts))

    def cells(self, baseline: int | None) -> list[str]:
        t = self.tally
        per_1000 = 1000 * self.units / max(1, self.requests)
        floor = f"{per_1000 / self.floor:.2f}×" if self.floor else "—"
        fewer = f"{baseline / self.units:.1f}×" if baseline and self.units else "—"
        lat = sorted(t.latencies) or [0.0]
        ages = sorted(t.ages) or [0]
        statuses = ", ".join(f"{s}: {n:,}" for s, n in sorted(t.statuses.items()))
        if t.errors:
            statuses += f", errors: {t.errors}"
        return [
            f"**{self.variant.name}**",
            f"{self.units:,}",
            f"{per_1000:,.1f}" if per_1000 < 100 else f"{per_1000:,.0f}",
            floor,
            f"{self.ids / self.units:.1f}" if self.units else "—",
            fewer,
            f"{sum(t.statuses.values()) / self.seconds:,.0f}",
            f"{_pct(lat, 50) * 1000:.1f} / {_pct(lat, 99) * 1000:.1f} ms",
            f"{_pct(ages, 50):g} / {_pct(ages, 99):g} s",
            statuses,
        ]


def _pct(values: Sequence[float], p: int) -> float:
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def _saved(urls: Sequence[str]) -> str:
    """``upstream_calls_saved_total`` by wrapper, summed over the replicas' ``/metrics``."""
    saved: dict[str, float] = {}
    for url in urls:
        status, body = http_get(int(url.rsplit(":", 1)[1]), "/metrics", 30)
        for line in body.decode().splitlines() if status == 200 else ():
            if line.startswith("influencer_stats_upstream_calls_saved_total{"):
                label, _, value = line.partition("} ")
                by = label.partition('by="')[2].rstrip('"')
                saved[by] = saved.get(by, 0.0) + float(value)
    return ", ".join(f"{by} {n:,.0f}" for by, n in sorted(saved.items())) or "none"


def measure(
    variant: Variant,
    load: World,
    rate: float,
    double_url: str,
    double_port: int,
    out: Path,
    slice_s: float = 0.0,
    clients: int = 0,
    extra: Sequence[tuple[str, str]] = (),
) -> Row:
    settings = {
        "INFLUENCER_STATS_CACHE_TTL": FRESH_S,
        "INFLUENCER_STATS_VIDEO_TTL": FRESH_S,
        "INFLUENCER_STATS_LOGGER": "silent",
        **dict(extra),
        **dict(variant.env),
    }
    profile = "distributed" if variant.redis else "youtube"
    with ExitStack() as stack:
        if variant.redis:
            settings["REDIS_URL"] = stack.enter_context(_redis(out))
        urls: list[str] = []
        for replica in range(variant.replicas):
            port = free_port()
            db = out / f"overlap-{len(urls)}-{time.monotonic_ns()}.sqlite3"
            env = service_env(double_url, "lab-key", {**settings, "INFLUENCER_STATS_DB": str(db)})
            log = out / f"overlap-service-{replica}.log"
            argv = installed_argv(profile, port, variant.flags)  # a choice not installed: its slot's first
            process = stack.enter_context(running(argv, log, env=env))
            wait_until_ok(port, "/healthz", process, log)
            urls.append(f"http://{HOST}:{port}")
        asyncio.run(put_collections(urls, load.collections))
        before, ids_before = _calls(double_port)
        counter = f"http://{HOST}:{double_port}/_control/stats"
        tally, seconds = asyncio.run(ask(urls, load.requests, rate, counter, slice_s, clients))
        after, ids_after = _calls(double_port)
        saved = _saved(urls) if slice_s else ""
    return Row(
        variant,
        len(load.requests),
        after - before,
        seconds,
        tally,
        before,
        saved,
        ids_after - ids_before,
        load.floor(),
    )


def table(rows: Sequence[Row], command: str, slice_s: float = 0.0) -> str:
    baseline = rows[0].units if rows else None
    head = [
        "variant",
        "quota units",
        "units / 1,000 req",
        "× floor",
        "ids / call",
        "fewer than today",
        "req/s",
        "latency p50 / p99",
        "answer age p50 / p99",
        "statuses",
    ]
    floor = rows[0].floor if rows else 0.0
    lines = [
        f"`{command}`",
        "",
        f"Floor: {floor:.2f} units per 1,000 requests (the distinct videos asked for ÷ {IDS_PER_CALL}).",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|",
    ]
    lines += ["| " + " | ".join(r.cells(baseline)) + " |" for r in rows]
    lines.append("")
    lines += [f"- **{r.variant.name}**: {r.variant.sentence}." for r in rows]
    if slice_s:
        lines += ["", f"Units every {slice_s:g} s, run by run (calls saved, from `/metrics`):", ""]
        lines += [f"- {r.variant.name}: {r.slices()} (saved: {r.saved})" for r in rows]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="perf/run.py --workload overlap", description=__doc__)
    parser.add_argument("--rate", type=float, default=200.0, help="stats requests per second (200)")
    parser.add_argument("--duration", type=int, default=60, help="seconds of load per variant (60)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--variants",
        help="comma-separated numbers (1-based) of the variants to run, in that order; a number may "
        "repeat (5,6,6,5 alternates one and two distributed processes)",
    )
    parser.add_argument(
        "--slice-s", type=float, default=0.0, help="also report the units spent every this many seconds"
    )
    parser.add_argument(
        "--clients", type=int, default=0, help="a closed loop of this many clients instead of --rate"
    )
    parser.add_argument("--requests", type=int, default=0, help="stats requests (--rate × --duration)")
    parser.add_argument("--pool", type=int, default=POOL, help=f"videos to draw from ({POOL:,})")
    parser.add_argument("--collections", type=int, default=COLLECTIONS, help=f"collections ({COLLECTIONS:,})")
    sizes = f"{SIZES[0]}-{SIZES[1]}"
    parser.add_argument("--sizes", default=sizes, help=f"ids a collection, MIN-MAX ({sizes})")
    parser.add_argument("--latency-ms", type=int, default=0, help="the double's delay per call (0)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="INFLUENCER_STATS_X=VALUE",
        help="a setting for every variant's service (repeatable)",
    )
    parser.add_argument("--out", type=Path, default=Path("perf/out"))
    parser.add_argument("--publish", action="store_true", help="also write the table into perf/RESULTS.md")
    args = parser.parse_args(sys.argv[1:] if argv is None else list(argv))
    if args.rate <= 0 or not 1 <= args.duration <= 600 or args.slice_s < 0:
        parser.error("--rate must be positive, --duration 1-600 s and --slice-s 0 or more")
    low, _, high = args.sizes.partition("-")
    if not (low.isdigit() and high.isdigit() and 1 <= int(low) <= int(high)):
        parser.error("--sizes must be MIN-MAX, as 20-200")
    if not (0 <= args.clients <= 1024 and 0 <= args.requests <= 1_000_000 and 0 <= args.latency_ms <= 10_000):
        parser.error("--clients 0-1024, --requests 0-1,000,000, --latency-ms 0-10,000")
    if args.pool < 1 or args.collections < 1:
        parser.error("--pool and --collections must be at least 1")
    shape = Shape(args.pool, args.collections, (int(low), int(high)))
    if any(not pair.startswith("INFLUENCER_STATS_") or "=" not in pair for pair in args.set):
        parser.error("--set takes INFLUENCER_STATS_NAME=VALUE")
    extra = [(name, value) for name, _, value in (pair.partition("=") for pair in args.set)]
    chosen: tuple[Variant, ...] = VARIANTS
    if args.variants:
        chosen = tuple(VARIANTS[int(n) - 1] for n in args.variants.split(","))
    args.out.mkdir(parents=True, exist_ok=True)
    load = world(args.seed, args.requests or round(args.rate * args.duration), shape)
    port = free_port()
    double_argv = [PYTHON, "-m", "youtube_double", "--port", str(port), "--latency-ms", str(args.latency_ms)]
    rows = []
    with running(double_argv, args.out / "overlap-double.log") as double:
        wait_until_ok(port, "/healthz", double, args.out / "overlap-double.log")
        url = f"http://{HOST}:{port}/youtube/v3/videos"
        for variant in chosen:
            print(f"overlap: {variant.name} …", file=sys.stderr, flush=True)
            rows.append(
                measure(variant, load, args.rate, url, port, args.out, args.slice_s, args.clients, extra)
            )
            print(f"overlap: {variant.name}: {rows[-1].units:,} units", file=sys.stderr, flush=True)
    flags: list[tuple[str, object]] = []
    if shape != Shape():
        flags += [("pool", args.pool), ("collections", args.collections), ("sizes", args.sizes)]
    if args.clients:
        flags += [("clients", args.clients), ("requests", len(load.requests))]
    else:
        flags.append(("rate", f"{args.rate:g}"))
        flags.append(("requests", args.requests) if args.requests else ("duration", args.duration))
    if args.latency_ms:
        flags.append(("latency-ms", args.latency_ms))
    flags += [("set", pair) for pair in args.set]
    flags.append(("seed", args.seed))
    if args.variants:
        flags.append(("variants", args.variants))
    if args.slice_s:
        flags.append(("slice-s", f"{args.slice_s:g}"))
    command = "python perf/run.py --workload overlap " + " ".join(f"--{k} {v}" for k, v in flags)
    text = table(rows, command, args.slice_s)
    (args.out / "overlap.md").write_text(text)
    print(text)
    if args.publish:
        record = Path("perf/RESULTS.md")
        current = record.read_text()
        if BEGIN in current and END in current:
            head, _, rest = current.partition(BEGIN)
            _, _, tail = rest.partition(END)
            record.write_text(f"{head}{BEGIN}\n{text}{END}{tail}")
        else:
            record.write_text(f"{current.rstrip()}\n\n## Quota economy\n\n{BEGIN}\n{text}{END}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
