"""The perf lab: every profile under the same wrk load, a flame graph each, one report.

    python perf/run.py --profiles v1,v2,v3,v4,v5,fast --duration 30 \\
        [--threads 1 --connections 16] [--collection original|1000|10000] \\
        [--out perf/out] [--report perf/RESULTS.md] [--flames perf/flames] \\
        [--chart perf/chart.png] [--short]

Steps: check the tools (wrk, py-spy, matplotlib: exit 2 with how to install
them); start the YouTube double (nginx with pre-rendered answers, else the
Python double); measure the ceiling (:mod:`perf.ceiling`); then for each
profile start ``main.py --profile P`` on a free port, seed the collections,
warm up, run wrk, read the memory, record a flame graph in a separate pass,
stop it; finally write the report, the chart and ``<out>/results.json``.
Progress goes to stderr. Exit 0 when every step worked, 1 when a profile or
flame graph failed (the report says which), 2 for bad arguments or missing
tools, 130 when interrupted. Everything listens on 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from importlib.util import find_spec
from pathlib import Path
from types import FrameType
from typing import Final

if __package__ in (None, ""):  # `python perf/run.py`: make `perf` importable as a package
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from influencer_stats.config import CHOICES, PROFILES, Choices, Profile
from perf import machine
from perf.chart import draw_chart
from perf.model import CEILING, Flame, LabRun, Measurement, Settings
from perf.procs import ROOT, LabError, free_port, memory_of_tree, start, stop, wait_until_ok
from perf.report import write_report
from perf.upstream import NGINX, Double, id_groups, youtube_double
from perf.workload import COLLECTION_CHOICES, Workload, check_stats, seed, workload
from perf.wrk import WRK, WrkError, WrkResult, run_wrk

DEFAULT_PROFILES: Final = "v1,v2,v3,v4,v5,fast"
SHORT: Final = {"duration": 2, "warmup": 1, "flame_duration": 2}
DEFAULTS: Final = {"duration": 30, "warmup": 5}
FLAME_RATE: Final = 100
INSTALL_HINTS: Final = {
    "wrk": "apt-get install wrk (Debian/Ubuntu), or run scripts/perf-up.sh as root",
    "py-spy": "pip install py-spy (a dev dependency: pip install -e '.[dev]')",
    "matplotlib": "pip install matplotlib (a dev dependency: pip install -e '.[dev]')",
}
_PY_SPY_COUNTS: Final = re.compile(r"Samples: (\d+) Errors: (\d+)")


class Progress:
    """One line per step on stderr, with the seconds since the start."""

    def __init__(self) -> None:
        self.started = time.monotonic()

    def __call__(self, message: str) -> None:
        print(f"[{time.monotonic() - self.started:6.1f}s] {message}", file=sys.stderr, flush=True)


@dataclasses.dataclass(frozen=True, slots=True)
class Options:
    profiles: list[str]
    settings: Settings
    out: Path
    report: Path
    flames: Path
    chart: Path
    nginx: str


def parse_args(argv: Sequence[str]) -> Options:
    parser = argparse.ArgumentParser(prog="perf/run.py", description=(__doc__ or "").split("\n\n")[0].strip())
    parser.add_argument(
        "--profiles",
        default=DEFAULT_PROFILES,
        help=f"comma-separated ({DEFAULT_PROFILES}); a variant overrides choices: fast+cache=none",
    )
    parser.add_argument("--duration", type=int, help="seconds of measured load per profile (30; --short: 2)")
    parser.add_argument("--warmup", type=int, help="seconds of warm-up load before it (5; --short: 1)")
    parser.add_argument("--threads", type=int, default=1, help="wrk threads (1)")
    parser.add_argument("--connections", type=int, default=16, help="wrk connections (16)")
    parser.add_argument("--collection", choices=COLLECTION_CHOICES, default="original")
    parser.add_argument("--out", type=Path, default=Path("perf/out"), help="logs, raw outputs, results.json")
    parser.add_argument("--report", type=Path, default=Path("perf/RESULTS.md"))
    parser.add_argument("--flames", type=Path, default=Path("perf/flames"), help="flame graph SVGs go here")
    parser.add_argument("--chart", type=Path, default=Path("perf/chart.png"))
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
        help="measure the ceiling and every profile this many times, alternating; each row is its "
        "median round (a shared machine drifts: 3 rounds show by how much)",
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
    profiles = [p.strip() for p in str(args.profiles).split(",") if p.strip()]
    if not profiles:
        parser.error("--profiles is empty")
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
        ),
        out=args.out,
        report=args.report,
        flames=args.flames,
        chart=args.chart,
        nginx=args.nginx,
    )


def find_py_spy() -> str | None:
    """py-spy next to this Python (a venv's bin/, even when not activated), else on PATH."""
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if os.access(beside, os.X_OK) else shutil.which("py-spy")


def missing_tools() -> list[str]:
    """Install hints for every tool the lab needs and cannot find."""
    missing = []
    if shutil.which(WRK) is None:
        missing.append(f"wrk: not on PATH; install: {INSTALL_HINTS['wrk']}")
    if find_py_spy() is None:
        missing.append(
            f"py-spy: not next to {sys.executable} nor on PATH; install: {INSTALL_HINTS['py-spy']}"
        )
    if find_spec("matplotlib") is None:
        missing.append(f"matplotlib: not importable; install: {INSTALL_HINTS['matplotlib']}")
    return missing


def lab_profile(spec: str) -> Profile:
    """A profile, or a variant of one: ``fast+cache=none+video_client=httpx``.

    Each ``+slot=choice`` overrides one choice (passed to main.py as
    ``--slot choice``), so a row can isolate a single swap.
    """
    base, *overrides = spec.split("+")
    profile = PROFILES[base]
    changes = dict(o.split("=", 1) for o in overrides)
    return Profile(spec, profile.description, dataclasses.replace(profile.choices, **changes))


def unknown_profiles(names: Sequence[str]) -> list[str]:
    unknown = []
    for name in names:
        try:
            profile = lab_profile(name)
        except (KeyError, TypeError, ValueError):
            unknown.append(name)
            continue
        slots = {f.name: getattr(profile.choices, f.name) for f in dataclasses.fields(Choices)}
        if any(value not in CHOICES[slot] for slot, value in slots.items()):
            unknown.append(name)
    return unknown


def main_argv(spec: str, port: int) -> list[str]:
    """``main.py --profile BASE [--slot choice ...] --port PORT`` for a lab profile spec."""
    base, *overrides = spec.split("+")
    flags = [
        part for o in overrides for part in ("--" + o.split("=", 1)[0].replace("_", "-"), o.split("=", 1)[1])
    ]
    return [sys.executable, "main.py", "--profile", base, *flags, "--port", str(port)]


def describe_choices(profile: Profile) -> str:
    """``server / video client / store / logger / cache`` of a profile."""
    return " / ".join(str(getattr(profile.choices, f.name)) for f in dataclasses.fields(profile.choices))


def choice_slots() -> str:
    """The slots :func:`describe_choices` lists, in its order."""
    return " / ".join(f.name.replace("_", " ") for f in dataclasses.fields(Choices))


@contextlib.contextmanager
def local_redis(profile: Profile, out: Path) -> Iterator[dict[str, str]]:
    """A throwaway redis-server on loopback for a profile that uses Redis (else nothing)."""
    if "redis" not in (profile.choices.store, profile.choices.cache):
        yield {}
        return
    binary = shutil.which("redis-server")
    if binary is None:
        raise LabError("profile uses Redis but redis-server is missing: apt-get install redis-server")
    port = free_port()
    log = out / f"redis-{profile.name}.log"
    argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    process = start(argv, log)
    try:
        deadline = time.monotonic() + 10
        while not _redis_answers(port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise LabError(f"redis-server did not answer on port {port}; log: {log}")
            time.sleep(0.05)
        yield {"REDIS_URL": f"redis://127.0.0.1:{port}/0"}
    finally:
        stop(process)


def _redis_answers(port: int) -> bool:
    import socket

    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def service_env(double: Double, db_path: Path, load: Workload) -> dict[str, str]:
    """This environment without INFLUENCER_STATS_* overrides (each profile runs as declared).

    A SQLite store gets a fresh database under --out (never the repository's data/); a
    collection bigger than the default limit raises the limit (and says so in the report).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("INFLUENCER_STATS_")}
    env.update(
        YOUTUBE_API_URL=double.url,
        YOUTUBE_API_KEY="perf-dummy-key",
        INFLUENCER_STATS_DB=str(db_path.resolve()),
    )
    env.update(load.service_env)
    return env


class Lab:
    """One run: the steps shared by the ceiling and the profiles."""

    def __init__(self, options: Options, load: Workload, py_spy: str, progress: Progress) -> None:
        self.options = options
        self.settings = options.settings
        self.load = load
        self.py_spy = py_spy
        self.progress = progress

    def wrk(self, name: str, port: int, seconds: int, label: str) -> WrkResult:
        s = self.settings
        url = f"http://127.0.0.1:{port}{self.load.stats_path}"
        result, text = run_wrk(url, threads=s.threads, connections=s.connections, duration_s=seconds)
        with (self.options.out / f"wrk-{name}.txt").open("a") as raw:
            raw.write(f"### {label}\n{text}\n")
        return result

    def measure_ceiling(self) -> Measurement:
        s = self.settings
        runs = "raw ASGI app, constant JSON body, uvicorn"
        port = free_port()
        log = self.options.out / "server-ceiling.log"
        _fresh(log, self.options.out / "wrk-ceiling.txt")
        self.progress(f"{CEILING}: starting perf/ceiling.py on port {port}")
        process = start([sys.executable, "-m", "perf.ceiling", "--port", str(port)], log)
        try:
            startup = wait_until_ok(port, "/healthz", process, log)
            if s.warmup_s:
                self.progress(f"{CEILING}: warm-up {s.warmup_s}s")
                self.wrk(CEILING, port, s.warmup_s, "warm-up")
            self.progress(f"{CEILING}: wrk -t{s.threads} -c{s.connections} -d{s.duration_s}s")
            result = self.wrk(CEILING, port, s.duration_s, "measured")
            memory = memory_of_tree(process.pid)
        except (LabError, WrkError) as error:
            self.progress(f"{CEILING}: FAILED: {error}")
            return Measurement(CEILING, runs, problem=str(error), log_path=log)
        finally:
            stop(process)
        self.progress(f"{CEILING}: {result.requests_per_s:,.1f} req/s, p99 {_ms(result.p99_ms)}")
        return Measurement(CEILING, runs, wrk=result, memory=memory, startup_s=startup, log_path=log)

    def measure_profile(self, name: str, double: Double, *, flame: bool = True) -> Measurement:
        out = self.options.out
        runs = describe_choices(lab_profile(name))
        port = free_port()
        log = out / f"server-{name}.log"
        db = out / f"db-{name}.sqlite3"
        _fresh(log, out / f"wrk-{name}.txt", out / f"py-spy-{name}.log", *_sqlite_files(db))
        argv = main_argv(name, port)
        self.progress(f"{name}: starting {' '.join(argv[1:])} (output: {log})")
        with contextlib.ExitStack() as resources:
            try:
                redis_env = resources.enter_context(local_redis(lab_profile(name), out))
            except LabError as error:
                self.progress(f"{name}: FAILED: {error}")
                return Measurement(name, runs, problem=str(error), log_path=log)
            process = start(argv, log, env=service_env(double, db, self.load) | redis_env, cwd=ROOT)
            return self._measure_running(name, runs, port, process, log, flame)

    def _measure_running(
        self, name: str, runs: str, port: int, process: subprocess.Popen[bytes], log: Path, record: bool
    ) -> Measurement:
        """``record``: take the flame graph (separate mode) in this round."""
        s = self.settings
        startup: float | None = None
        first: str | None = None
        flame: Flame | None = None
        try:
            startup = wait_until_ok(port, "/healthz", process, log)
            self.progress(f"{name}: healthy after {startup:.1f}s; seeding {self.load.describe()}")
            seed(port, self.load)
            first = check_stats(port, self.load)
            if first:
                self.progress(f"{name}: note: {first}")
            if s.warmup_s:
                self.progress(f"{name}: warm-up {s.warmup_s}s")
                self.wrk(name, port, s.warmup_s, "warm-up")
            if s.flame_mode == "concurrent":
                self.progress(f"{name}: wrk {s.duration_s}s while py-spy records")
                result, flame = self.profiled_pass(name, process.pid, port, "measured + py-spy")
            else:
                self.progress(f"{name}: wrk -t{s.threads} -c{s.connections} -d{s.duration_s}s")
                result = self.wrk(name, port, s.duration_s, "measured")
            memory = memory_of_tree(process.pid)
            self.progress(
                f"{name}: {result.requests_per_s:,.1f} req/s, p99 {_ms(result.p99_ms)}, "
                f"RSS {memory.rss_mb:.1f} MB"
            )
            if s.flame_mode == "separate" and record:
                self.progress(f"{name}: flame graph: {s.flame_duration_s}s of the same load under py-spy")
                _, flame = self.profiled_pass(name, process.pid, port, "py-spy pass")
        except (LabError, WrkError) as error:
            self.progress(f"{name}: FAILED: {error}")
            return Measurement(
                name, runs, problem=str(error), startup_s=startup, log_path=log, log_bytes=_size(log)
            )
        finally:
            stop(process)
        if flame is not None:
            if flame.problem:
                self.progress(f"{name}: flame graph FAILED: {flame.problem}")
            else:
                self.progress(f"{name}: flame graph {flame.path} ({flame.samples} samples)")
        return Measurement(
            name,
            runs,
            wrk=result,
            memory=memory,
            flame=flame,
            startup_s=startup,
            log_path=log,
            log_bytes=_size(log),
            notes=(first,) if first else (),
        )

    def profiled_pass(self, name: str, pid: int, port: int, label: str) -> tuple[WrkResult, Flame]:
        """wrk while py-spy samples ``pid`` for the same number of seconds."""
        seconds = self.settings.flame_duration_s
        svg = self.options.flames / f"flame-{name}.svg"
        svg.parent.mkdir(parents=True, exist_ok=True)
        svg.unlink(missing_ok=True)
        spy_log = self.options.out / f"py-spy-{name}.log"
        argv = [
            self.py_spy, "record", "--pid", str(pid), "--output", str(svg), "--format", "flamegraph",
            "--duration", str(seconds), "--rate", str(FLAME_RATE), "--nonblocking", "--subprocesses",
        ]  # fmt: skip
        spy = start(argv, spy_log)
        try:
            result = self.wrk(name, port, seconds, label)
            with contextlib.suppress(subprocess.TimeoutExpired):
                spy.wait(seconds + 30)
        finally:
            code = stop(spy)
        text = spy_log.read_text(errors="replace")
        counts = _PY_SPY_COUNTS.search(text)
        samples, errors = (int(counts[1]), int(counts[2])) if counts else (None, None)
        problem = None
        if code != 0:
            problem = f"py-spy exited with {code}: {text.strip()[-300:]}"
        elif not svg.exists() or svg.stat().st_size == 0 or b"<svg" not in svg.read_bytes()[:2000]:
            problem = f"py-spy wrote no SVG to {svg}: {text.strip()[-300:]}"
        return result, Flame(svg, result, samples, errors, problem)


def median_round(rounds: Sequence[Measurement], ceilings: Sequence[Measurement] = ()) -> Measurement:
    """One row from several rounds of one profile: its median round by req/s.

    A round that failed fails the row. The flame graph is the last round's (only it records
    one). With several rounds a note lists req/s by round and, given the ceilings measured
    in the same rounds, the ratio to the ceiling in each.
    """
    if len(rounds) == 1:
        return rounds[0]
    failed = [m for m in rounds if m.problem or m.wrk is None]
    if failed:
        return failed[0]
    ordered = sorted(rounds, key=lambda m: m.rps or 0.0)
    middle = ordered[(len(ordered) - 1) // 2]  # the lower median: a real round, not an average
    by_round = " / ".join(f"{(m.rps or 0.0):,.0f}" for m in rounds)
    note = f"req/s by round {by_round} (the row is the median round)"
    if len(ceilings) == len(rounds) and all(c.rps for c in ceilings):
        ratios = " / ".join(
            f"{(m.rps or 0.0) / (c.rps or 1):.2f}" for m, c in zip(rounds, ceilings, strict=True)
        )
        note += f"; ceiling ratio by round {ratios}"
    return dataclasses.replace(middle, flame=rounds[-1].flame, notes=(*middle.notes, note))


def _fresh(*paths: Path) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


def _sqlite_files(db: Path) -> list[Path]:
    return [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]


def _size(path: Path) -> int | None:
    return path.stat().st_size if path.exists() else None


def _ms(value: float | None) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.2f} ms"


def _json_safe(value: object) -> object:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def write_results_json(run: LabRun, path: Path) -> None:
    path.write_text(json.dumps(_json_safe(dataclasses.asdict(run)), indent=2) + "\n")


def logged_trouble(log: Path, limit: int = 5) -> str:
    """The most frequent warning/error events of a JSON-lines server log, as ``event (error) ×n``."""
    counts: Counter[str] = Counter()
    try:
        with log.open("rb") as lines:
            for line in lines:
                if b'"level":"warning"' not in line and b'"level":"error"' not in line:
                    continue
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if isinstance(event, dict):
                    detail = event.get("error")
                    counts[f"{event.get('event')}" + (f" ({detail})" if detail else "")] += 1
    except OSError:
        return ""
    return ", ".join(f"`{name}` ×{n:,}" for name, n in counts.most_common(limit))


def notes_for(run_profiles: Sequence[Measurement], double: Double) -> list[str]:
    notes = []
    if double.kind == "python":
        notes.append(f"**YouTube double**: {double.note}.")
    for m in run_profiles:
        trouble = logged_trouble(m.log_path) if m.log_path else ""
        if trouble:
            notes.append(f"**{m.name}** logged warnings/errors (all passes, warm-up included): {trouble}.")
        if m.log_bytes is not None and m.log_bytes > 50 * 2**20:
            notes.append(
                f"**{m.name}** wrote {m.log_bytes / 2**20:,.0f} MB of log output in this run "
                f"({m.log_path}); the logging is part of what is measured."
            )
    dropped = sorted(k for k in os.environ if k.startswith("INFLUENCER_STATS_"))
    if dropped:
        notes.append(f"Ignored from the environment, so each profile runs as declared: {', '.join(dropped)}.")
    return notes


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    options = parse_args(arguments)
    progress = Progress()
    progress("checking tools")
    missing = missing_tools()
    if missing:
        print("perf/run.py: missing tools:\n  " + "\n  ".join(missing), file=sys.stderr)
        return 2
    unknown = unknown_profiles(options.profiles)
    if unknown:
        print(
            f"perf/run.py: unknown profile(s) {', '.join(unknown)}: not in influencer_stats.config.PROFILES "
            f"(available: {', '.join(PROFILES)}; see `python main.py --list-profiles`)",
            file=sys.stderr,
        )
        return 2
    try:
        load = workload(options.settings.collection)
    except LabError as error:
        print(f"perf/run.py: {error}", file=sys.stderr)
        return 2
    py_spy = find_py_spy()
    assert py_spy is not None  # checked by missing_tools
    signal.signal(signal.SIGTERM, _interrupt)
    for folder in (options.out, options.flames):
        folder.mkdir(parents=True, exist_ok=True)
    started_at = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    load_before = machine.load_average()
    tools = {"wrk": [WRK, "-v"], "py-spy": [py_spy, "--version"], "nginx": [options.nginx, "-v"]}
    host = machine.describe(tools)
    lab = Lab(options, load, py_spy, progress)
    groups = [
        g for name in options.profiles for g in id_groups(lab_profile(name).choices.video_client, load.videos)
    ]
    try:
        with youtube_double(options.out / "double", groups, nginx=options.nginx) as double:
            if double.kind == "python":
                progress(f"WARNING: {options.nginx} not found: using {double.note}")
            else:
                progress(f"YouTube double: {double.note}, port {double.port}")
            rounds = options.settings.rounds
            ceilings: list[Measurement] = []
            by_profile: dict[str, list[Measurement]] = {name: [] for name in options.profiles}
            for number in range(1, rounds + 1):
                if rounds > 1:
                    progress(f"round {number} of {rounds}")
                ceilings.append(lab.measure_ceiling())
                for name in options.profiles:  # the flame graph in the last round only
                    by_profile[name].append(lab.measure_profile(name, double, flame=number == rounds))
            ceiling = median_round(ceilings)
            profiles = [median_round(ms, ceilings) for ms in by_profile.values()]
    except KeyboardInterrupt:
        progress("interrupted: servers stopped, no report written")
        return 130
    except LabError as error:
        progress(f"FAILED: the YouTube double did not start: {error}")
        return 1
    run = LabRun(
        command=shlex.join(["python", sys.argv[0] if argv is None else "perf/run.py", *arguments]),
        started_at=started_at,
        elapsed_s=time.monotonic() - progress.started,
        machine=host,
        settings=options.settings,
        workload=load.describe(),
        choice_slots=choice_slots(),
        double=double.note,
        double_kind=double.kind,
        ceiling=ceiling,
        profiles=profiles,
        load_before=load_before,
        load_after=machine.load_average(),
        notes=notes_for(profiles, double),
    )
    progress(f"writing {options.chart}, {options.report} and {options.out / 'results.json'}")
    write_results_json(run, options.out / "results.json")
    draw_chart(options.chart, profiles, ceiling)
    write_report(run, options.report, options.chart)
    failed = [m.name for m in [*profiles, ceiling] if m.problem or (m.flame and m.flame.problem)]
    if failed:
        progress(f"done with failures: {', '.join(failed)} (see {options.report})")
        return 1
    progress(f"done: {options.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
