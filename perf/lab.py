"""Measuring: the references and each profile under wrk, one server at a time, a profile with its flame graph."""

from __future__ import annotations

import contextlib
import math
import subprocess
import sys
import time
from pathlib import Path

from perf.flame import record_flame
from perf.model import CEILING, Flame, Measurement
from perf.options import Options
from perf.procs import (
    PYTHON,
    SERVER_CPU,
    LabError,
    cpu_of_tree,
    free_port,
    memory_of_tree,
    pinned,
    running,
    stop,
    wait_until_ok,
)
from perf.profiles import granian_flags
from perf.redis_server import local_redis
from perf.references import GUARDED_CACHE, MINIMAL, RSGI_CEILING, RUNS
from perf.service import main_argv, service_env
from perf.specs import describe_choices, split_spec
from perf.upstream import Double
from perf.workload import Workload, check_stats, seed
from perf.wrk import WrkError, WrkResult, run_wrk

API_KEY = "perf-dummy-key"


class Progress:
    """One line per step on stderr, with the seconds since the start."""

    def __init__(self) -> None:
        self.started = time.monotonic()

    def __call__(self, message: str) -> None:
        print(f"[{time.monotonic() - self.started:6.1f}s] {message}", file=sys.stderr, flush=True)


def lab_service_env(double: Double, db_path: Path, load: Workload) -> dict[str, str]:
    """The service's environment: the caller's without INFLUENCER_STATS_* overrides (each profile runs as declared).

    A SQLite store gets a fresh database under --out (never the repository's data/); a
    collection bigger than the default limit raises the limit (and says so in the report).
    """
    return service_env(
        double.url, API_KEY, {"INFLUENCER_STATS_DB": str(db_path.resolve()), **load.service_env}
    )


class Lab:
    """One run: the steps shared by the references and the profiles."""

    def __init__(self, options: Options, load: Workload, py_spy: str, progress: Progress) -> None:
        self.options = options
        self.settings = options.settings
        self.load = load
        self.py_spy = py_spy
        self.progress = progress
        self.server_cpu = SERVER_CPU if options.settings.pin else None
        """Where the servers run with ``--pin`` (everything else is on the lab's own CPU)."""

    def wrk(self, name: str, port: int, seconds: int, label: str) -> WrkResult:
        s = self.settings
        url = f"http://127.0.0.1:{port}{self.load.stats_path}"
        result, text = run_wrk(url, threads=s.threads, connections=s.connections, duration_s=seconds)
        with (self.options.out / f"wrk-{name}.txt").open("a") as raw:
            raw.write(f"### {label}\n{text}\n")
        return result

    def warm_up(self, name: str, port: int) -> None:
        """The same load for ``--warmup`` seconds (none at 0), not measured."""
        if self.settings.warmup_s:
            self.progress(f"{name}: warm-up {self.settings.warmup_s}s")
            self.wrk(name, port, self.settings.warmup_s, "warm-up")

    def measured_pass(self, name: str, port: int) -> WrkResult:
        s = self.settings
        self.progress(f"{name}: wrk -t{s.threads} -c{s.connections} -d{s.duration_s}s")
        return self.wrk(name, port, s.duration_s, "measured")

    def measure_reference(self, name: str, double: Double, *, flame: bool = False) -> Measurement:
        """One of :data:`perf.references.REFERENCES`, under the same load as the profiles.

        ``flame``: record its flame graph after the measured pass, as a profile's (only ``guarded``
        and ``guarded+cache=none`` take one; the others have nothing to read beside a profile's).
        """
        if name in GUARDED_CACHE:
            return self.measure_guarded(name, double, flame=flame)
        if name == MINIMAL:
            return self.measure_minimal(double)
        if name == RSGI_CEILING:
            return self.measure_constant(RSGI_CEILING, ["-m", "perf.rsgi_ceiling", *granian_flags()])
        return self.measure_constant(CEILING, ["-m", "perf.ceiling"])

    def measure_constant(self, name: str, arguments: list[str]) -> Measurement:
        """A server answering a constant body (``perf/ceiling.py``, ``perf/rsgi_ceiling.py``): nothing to seed."""
        runs = RUNS[name]
        port = free_port()
        log = self.options.out / f"server-{name}.log"
        _fresh(log, self.options.out / f"wrk-{name}.txt")
        self.progress(f"{name}: starting python -m {arguments[1]} on port {port}")
        try:
            with running(pinned([PYTHON, *arguments, "--port", str(port)], self.server_cpu), log) as process:
                startup = wait_until_ok(port, "/healthz", process, log)
                self.warm_up(name, port)
                cpu_before = cpu_of_tree(process.pid)
                result = self.measured_pass(name, port)
                cpu_s = cpu_of_tree(process.pid) - cpu_before
                memory = memory_of_tree(process.pid)
        except (LabError, WrkError) as error:
            self.progress(f"{name}: FAILED: {error}")
            return Measurement(name, runs, problem=str(error), log_path=log)
        self.progress(f"{name}: {result.requests_per_s:,.1f} req/s, p99 {_ms(result.p99_ms)}")
        return Measurement(
            name,
            runs,
            wrk=result,
            memory=memory,
            startup_s=startup,
            log_path=log,
            log_bytes=_size(log),
            cpu_s=cpu_s,
        )

    def measure_minimal(self, double: Double) -> Measurement:
        """``perf/minimal.py`` against the double, seeded and checked like a profile."""
        out = self.options.out
        port = free_port()
        log = out / f"server-{MINIMAL}.log"
        _fresh(log, out / f"wrk-{MINIMAL}.txt")
        argv = [PYTHON, "-m", "perf.minimal", *granian_flags(), "--port", str(port)]
        self.progress(f"{MINIMAL}: starting perf/minimal.py on port {port} (output: {log})")
        env = service_env(double.url, API_KEY, self.load.service_env)  # YOUTUBE_API_URL and _KEY
        with running(pinned(argv, self.server_cpu), log, env=env) as process:
            return self._measure_running(MINIMAL, RUNS[MINIMAL], port, process, log, record=False)

    def measure_guarded(self, name: str, double: Double, *, flame: bool) -> Measurement:
        """``perf/guarded.py`` with its stats cache on or off, seeded and checked like a profile.

        Its environment is a profile's (the lab's settings, the double, no quota budget): it
        resolves the numbers ``fast`` runs with from it.
        """
        out = self.options.out
        port = free_port()
        log = out / f"server-{name}.log"
        _fresh(log, out / f"wrk-{name}.txt", out / f"py-spy-{name}.log")
        argv = [PYTHON, "-m", "perf.guarded", *granian_flags(), "--cache", GUARDED_CACHE[name]]
        argv += ["--port", str(port)]
        self.progress(f"{name}: starting {' '.join(argv[1:])} (output: {log})")
        env = service_env(double.url, API_KEY, self.load.service_env)
        with running(pinned(argv, self.server_cpu), log, env=env) as process:
            return self._measure_running(name, RUNS[name], port, process, log, record=flame)

    def measure_profile(self, name: str, double: Double, *, flame: bool = True) -> Measurement:
        out = self.options.out
        runs = describe_choices(name)
        port = free_port()
        log = out / f"server-{name}.log"
        db = out / f"db-{name}.sqlite3"
        _fresh(log, out / f"wrk-{name}.txt", out / f"py-spy-{name}.log", *_sqlite_files(db))
        base, overrides = split_spec(name)
        argv = main_argv(base, port, overrides)
        self.progress(f"{name}: starting {' '.join(argv[1:])} (output: {log})")
        with contextlib.ExitStack() as resources:
            try:
                redis_env = resources.enter_context(local_redis(name, out))
            except LabError as error:
                self.progress(f"{name}: FAILED: {error}")
                return Measurement(name, runs, problem=str(error), log_path=log)
            env = lab_service_env(double, db, self.load) | redis_env
            process = resources.enter_context(running(pinned(argv, self.server_cpu), log, env=env))
            return self._measure_running(name, runs, port, process, log, flame)

    def _measure_running(
        self, name: str, runs: str, port: int, process: subprocess.Popen[bytes], log: Path, record: bool
    ) -> Measurement:
        """``record``: take the flame graph (separate mode) in this round. Stops ``process``."""
        s = self.settings
        startup: float | None = None
        first: str | None = None
        flame: Flame | None = None
        cpu_s: float | None = None
        try:
            startup = wait_until_ok(port, "/healthz", process, log)
            self.progress(f"{name}: healthy after {startup:.1f}s; seeding {self.load.describe()}")
            seed(port, self.load)
            first = check_stats(port, self.load)
            if first:
                self.progress(f"{name}: note: {first}")
            self.warm_up(name, port)
            if s.flame_mode == "concurrent":
                self.progress(f"{name}: wrk {s.duration_s}s while py-spy records")
                result, flame = self.profiled_pass(name, process.pid, port, "measured + py-spy")
            else:
                cpu_before = cpu_of_tree(process.pid)
                result = self.measured_pass(name, port)
                cpu_s = cpu_of_tree(process.pid) - cpu_before
            memory = memory_of_tree(process.pid)
            cpu = (
                ""
                if cpu_s is None
                else f", server CPU {cpu_s / max(1, result.requests) * 1e6:.1f} µs/request"
            )
            self.progress(
                f"{name}: {result.requests_per_s:,.1f} req/s, p99 {_ms(result.p99_ms)}, "
                f"RSS {memory.rss_mb:.1f} MB{cpu}"
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
            stop(process)  # before the log's size is read: its shutdown lines count
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
            cpu_s=cpu_s,
        )

    def profiled_pass(self, name: str, pid: int, port: int, label: str) -> tuple[WrkResult, Flame]:
        """wrk while py-spy samples ``pid`` for the same number of seconds."""
        seconds = self.settings.flame_duration_s
        return record_flame(
            self.py_spy,
            pid,
            self.options.flames / f"flame-{name}.svg",
            self.options.out / f"py-spy-{name}.log",
            seconds,
            lambda: self.wrk(name, port, seconds, label),
        )


def _fresh(*paths: Path) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


def _sqlite_files(db: Path) -> list[Path]:
    return [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]


def _size(path: Path) -> int | None:
    return path.stat().st_size if path.exists() else None


def _ms(value: float | None) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.2f} ms"
