"""Rendering a :class:`~perf.model.LabRun` as Markdown, keeping the human-written section.

Everything in the report is regenerated on every run except the section
:data:`READING_HEADING`, which is copied from the existing report (if any);
profiles it does not mention yet get a placeholder line.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Final

from perf.model import LabRun, Measurement
from perf.procs import LOAD_CPU, SERVER_CPU
from perf.references import references_section
from perf.report_sections import extract_section, hand_written
from perf.rounds import fmt_times
from perf.wrk import WrkResult

READING_HEADING: Final = "## Reading the flame graphs"
#: Written by perf/soak.py; kept as it is when run.py rewrites the report.
SOAK_HEADING: Final = "## Soak under faults"

TALK_TABLE: Final = """\
| version | what changed | requests | p99 | avg | req/s |
|---|---|---|---|---|---|
| 1 | log everything, linked-list store, Akka HTTP client + server | 8,510 | 82.41 ms | 56.47 ms | 283 |
| 2 | logger drops logs above 1,000/s | 89,757 | 62.53 ms | 6.94 ms | 2,986 |
| 3 | another HTTP client | 96,564 | 13.05 ms | 5.06 ms | 3,218 |
| 4 | statistics cached, refreshed in the background | 933,303 | 62.86 ms | 2.87 ms | 31,082 |
| 5 | another HTTP server | 1,158,664 | 9.05 ms | 0.56 ms | 38,596 |"""


def fmt_ms(value: float | None) -> str:
    """A latency the way wrk scales it: µs, ms or s."""
    if value is None or math.isnan(value):
        return "—"
    if value < 1:
        return f"{value * 1000:.0f} µs"
    if value < 1000:
        return f"{value:.2f} ms"
    return f"{value / 1000:.2f} s"


def fmt_rps(value: float | None) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:,.1f}"


def fmt_ratio(value: float | None, reference: float | None, *, percent: bool) -> str:
    if value is None or reference is None or math.isnan(value) or not reference:
        return "—"
    ratio = value / reference
    return f"{ratio * 100:.1f}%" if percent else f"{ratio:.1f}×"


def fmt_mb(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def link(target: Path, report: Path) -> str:
    """``target`` relative to the report's folder, with forward slashes."""
    return Path(os.path.relpath(target.resolve(), report.resolve().parent)).as_posix()


def _row(m: Measurement, ceiling_rps: float | None, v1_rps: float | None) -> str:
    w: WrkResult | None = m.wrk
    c = m.comparison
    compared = (
        [c.reference, fmt_times(c.rps), fmt_times(c.p50), fmt_times(c.p99)] if c else ["—", "—", "—", "—"]
    )
    if w is None:
        cells = [m.name, m.runs, "failed (see Problems)", *["—"] * 11, *compared]
    else:
        cells = [
            m.name,
            m.runs,
            f"{w.requests:,}",
            fmt_ms(w.avg_ms),
            fmt_ms(w.p50_ms),
            fmt_ms(w.p99_ms),
            fmt_ms(w.max_ms),
            fmt_rps(w.requests_per_s),
            f"{w.non_2xx:,}",
            str(w.socket_errors),
            fmt_mb(m.memory.rss_mb if m.memory else None),
            fmt_mb(m.memory.peak_mb if m.memory else None),
            fmt_ratio(w.requests_per_s, ceiling_rps, percent=True),
            fmt_ratio(w.requests_per_s, v1_rps, percent=False),
            *compared,
        ]
    return "| " + " | ".join(cells) + " |"


def results_table(run: LabRun) -> str:
    """One row per profile, then the references (the uvicorn ceiling last)."""
    ceiling_rps = run.ceiling.rps
    v1 = next((m for m in run.profiles if m.name == "v1"), None)
    v1_rps = v1.rps if v1 else None
    header = (
        f"| profile | what it runs ({run.choice_slots}) | requests | avg | p50 | p99 | max | req/s "
        "| non-2xx | socket errors (c/r/w/t) | RSS MB | peak RSS MB | ceiling % | × v1 "
        "| reference | × ref req/s | × ref p50 | × ref p99 |"
    )
    rule = "|" + "---|" * 2 + "---:|" * 12 + "---|" + "---:|" * 3
    rows = [_row(m, ceiling_rps, v1_rps) for m in [*run.profiles, *run.references, run.ceiling]]
    return "\n".join([header, rule, *rows])


def _profiling_change(m: Measurement) -> tuple[str, str]:
    """req/s while py-spy sampled, and its change against the measured pass."""
    flame = m.flame
    if flame is None or flame.wrk is None or m.wrk is None:
        return "—", "—"
    profiled = flame.wrk.requests_per_s
    if flame.wrk is m.wrk:
        return fmt_rps(profiled), "(the measured pass)"
    change = _change(m.wrk.requests_per_s, profiled)
    return fmt_rps(profiled), "—" if change is None else f"{change * 100:+.0f}%"


def _change(measured: float, profiled: float) -> float | None:
    if not measured or math.isnan(measured) or math.isnan(profiled):
        return None
    return (profiled - measured) / measured


def details_table(run: LabRun, report: Path) -> str:
    """Per profile, and per reference that recorded one (``guarded``): its flame graph (the first
    column, so only the results table has ``| name |`` rows)."""
    lines = [
        "| flame graph | req/s under py-spy | change | py-spy samples (errors) | started in | server log |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for m in [*run.profiles, *(r for r in run.references if r.flame is not None)]:
        flame = m.flame
        graph = f"{m.name} (none)"
        samples = "—"
        if flame is not None:
            ok = flame.problem is None
            graph = f"[{m.name}]({link(flame.path, report)})" if ok else f"{m.name} (failed)"
            if flame.samples is not None:
                samples = f"{flame.samples:,} ({flame.errors or 0:,})"
        profiled, change = _profiling_change(m)
        started = "—" if m.startup_s is None else f"{m.startup_s:.1f} s"
        log = "—" if m.log_bytes is None else f"{m.log_bytes / 2**20:,.1f} MB"
        lines.append(f"| {graph} | {profiled} | {change} | {samples} | {started} | {log} |")
    return "\n".join(lines)


def average_profiling_change(run: LabRun) -> float | None:
    """Mean relative req/s change of the py-spy passes against the measured ones (separate mode)."""
    changes = [
        _change(m.wrk.requests_per_s, m.flame.wrk.requests_per_s)
        for m in run.profiles
        if m.wrk and m.flame and m.flame.wrk and m.flame.wrk is not m.wrk
    ]
    known = [c for c in changes if c is not None]
    return sum(known) / len(known) if known else None


def placement() -> str:
    """Where ``--pin`` put each process (the report's 'How it was measured')."""
    return (
        f"- Placement (`--pin`): the server under test, every process of it (workers inherit it), on "
        f"CPU {SERVER_CPU} alone (`taskset --cpu-list {SERVER_CPU}`); the load on CPU {LOAD_CPU}: wrk, "
        f"and with it the YouTube double (nginx), each profile's redis-server, py-spy and the lab "
        f"itself (the lab moves to CPU {LOAD_CPU} before starting anything, and its children inherit "
        "it). The server's CPU time per request is then its own core's work; whatever it waits on "
        "(Redis, the double) shares the load generator's core."
    )


def _method(run: LabRun) -> str:
    s = run.settings
    change = average_profiling_change(run)
    change_text = (
        ""
        if change is None
        else f" In this run req/s under py-spy changed by {change * 100:+.0f}% on average "
        "(one short pass each: on a noisy machine only a large drop means much)."
    )
    if s.flame_mode == "separate":
        flame = (
            f"Flame graphs are recorded in a **separate pass after the measured one**: another "
            f"{s.flame_duration_s} s of the same wrk load while `py-spy record --rate 100 --nonblocking` "
            "samples the server. py-spy reads the server's memory 100 times a second and needs CPU "
            f"time on the same {run.machine.cores} cores as wrk, the double and the server, so running it "
            "during the measured pass would lower the numbers in the table; the 'change' column below "
            f"measures that on every run (the py-spy pass against the measured one).{change_text} "
            "The flame graph shows where the time goes under the same load; the table is not affected. "
            "(When the lab was built, an A/B test on a 2-core machine, the demo profile in 4 alternating "
            "8 s rounds without and with py-spy, put py-spy's effect at -2% to +23%, inside the machine's "
            "run-to-run noise: concurrent recording would mostly be fine, but the separate pass costs only "
            "its seconds and keeps the table clean for any profile, including many-threaded ones.)"
        )
    else:
        flame = (
            "Flame graphs are recorded **during the measured pass** (`--flame-mode concurrent`): the "
            "numbers in the table include py-spy's overhead. The default, `separate`, keeps them clean."
        )
    short = " **`--short` run: a smoke test of the lab, not a measurement.**" if s.short else ""
    return "\n".join(
        [
            f"- Load: `wrk -t{s.threads} -c{s.connections} -d{s.duration_s}s --latency` on 127.0.0.1, "
            f"after a {s.warmup_s} s warm-up with the same settings; wrk's default 2 s timeout "
            f"(a slower answer counts as a socket timeout).{short}",
            f"- Data (`--collection {s.collection}`): {run.workload}.",
            *(
                [
                    f"- Rounds (`--rounds {s.rounds}`): every profile was measured {s.rounds} times, "
                    "each time right after its reference (see References); each row is its median "
                    "round by req/s (a reference's: its median measurement), and the notes below give "
                    "every round (the machine is shared: its speed drifts)."
                ]
                if s.rounds > 1
                else []
            ),
            f"- YouTube double: {run.double}.",
            *([placement()] if s.pin else []),
            "- Each profile runs as its own process (`python main.py --profile P`), one after "
            "the other, with its output in a log file; the ceiling is a raw ASGI app "
            "(`perf/ceiling.py`: a constant JSON body of a stats answer's size) on uvicorn with the "
            "service's settings. A server other than uvicorn can beat it (ceiling % above 100): "
            "the `× ref` columns compare each profile with the reference of its own server instead.",
            "- RSS: VmRSS of the server process (and any children) right after the measured pass; "
            "peak: VmHWM.",
            f"- {flame}",
        ]
    )


def _machine(run: LabRun) -> str:
    m = run.machine
    packages = ", ".join(f"{name} {version}" for name, version in m.packages.items())
    tools = "; ".join(f"{name}: {version}" for name, version in m.tools.items())
    return "\n".join(
        [
            f"- CPU: {m.cpu_model}, {m.cores} cores (`nproc`); {m.kernel}",
            f"- Python: {m.python}",
            f"- Packages: {packages}",
            f"- Tools: {tools}",
            f"- Load average (1/5/15 min) before: {run.load_before}; after: {run.load_after} "
            "(a shared machine: compare rows of one run, not runs of different days)",
            f"- Started {run.started_at}, took {run.elapsed_s:.0f} s",
        ]
    )


def _placeholder(m: Measurement, report: Path) -> str:
    graph = f" ([flame graph]({link(m.flame.path, report)}))" if m.flame else ""
    return (
        f"- **{m.name}**{graph}: _not written yet: what takes the time, and what the next profile changes._"
    )


def reading_section(run: LabRun, report: Path, previous: str | None) -> str:
    """The kept section, plus a placeholder for every profile of this run it does not mention."""
    kept = extract_section(previous, READING_HEADING) if previous else None
    if kept is None:
        kept = (
            f"{READING_HEADING}\n\n"
            "<!-- Written by people. perf/run.py keeps this section as it is when it rewrites the "
            "report, and only adds a placeholder line for a profile it does not mention yet. -->\n"
        )
    missing = [m for m in run.profiles if not re.search(rf"\*\*{re.escape(m.name)}\*\*", kept)]
    lines = [kept.rstrip(), ""] if kept.rstrip().endswith("-->") else [kept.rstrip()]
    lines += [_placeholder(m, report) for m in missing]
    return "\n".join(lines) + "\n"


def one_line(text: str, limit: int = 500) -> str:
    """Whitespace (newlines of a log tail included) collapsed, cut at ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def problems(run: LabRun) -> list[str]:
    """Failures and numbers that deserve a second look, one line each."""
    found: list[str] = []
    for m in [*run.profiles, *run.references, run.ceiling]:
        if m.problem:
            log = f" (server log: `{m.log_path}`)" if m.log_path else ""
            found.append(f"**{m.name}** failed{log}: `{one_line(m.problem).replace('`', chr(39))}`")
        found += [f"**{m.name}**: {one_line(note)}" for note in m.notes]
        if m.wrk is not None:
            if m.wrk.requests == 0:
                found.append(f"**{m.name}**: no request completed during the measured pass")
            if m.wrk.socket_errors.total:
                found.append(
                    f"**{m.name}**: {m.wrk.socket_errors.total:,} socket errors "
                    f"(connect/read/write/timeout {m.wrk.socket_errors})"
                )
            if m.wrk.non_2xx:
                found.append(f"**{m.name}**: {m.wrk.non_2xx:,} answers were not 2xx/3xx")
        if m.flame is not None and m.flame.problem:
            found.append(f"**{m.name}** flame graph: {one_line(m.flame.problem)}")
    return found


def render(run: LabRun, report: Path, chart: Path | None, previous: str | None) -> str:
    """The whole report; ``previous`` is the old report's text, whose sections written by people
    (the readings of the flame graphs, the soak, every other section this does not generate) are
    kept: the readings in their place, the others after the generated ones, in their order."""
    trouble = problems(run) + run.notes
    parts = [
        "# Perf lab results",
        "",
        "<!-- Generated by perf/run.py; the sections it does not generate ('Reading the flame graphs', "
        "'Soak under faults' and every other one written by people) are kept on re-runs. -->",
        "",
        "## Results",
        "",
        results_table(run),
        "",
    ]
    if chart is not None:
        parts += [f"![req/s and p99 per profile]({link(chart, report)})", ""]
    used = [m.name for m in [*run.references, run.ceiling]]
    parts += [
        references_section(used, run.pairs),
        "## How it was measured",
        "",
        _method(run),
        "",
        "## Machine",
        "",
        _machine(run),
        "",
        "## Command",
        "",
        "```sh",
        run.command,
        "```",
        "",
        "## Flame graphs and details",
        "",
        details_table(run, report),
        "",
        reading_section(run, report, previous),
        "## Problems and notes",
        "",
        *([f"- {line}" for line in trouble] or ["- none"]),
        "",
        "## The talk's numbers, for comparison",
        "",
        "Scala on the JVM, on a laptop, `wrk -t1 -c16 -d30s`; other hardware and another runtime, so "
        "compare the ratios between versions, not the absolute numbers.",
        "",
        TALK_TABLE,
        "",
    ]
    generated = "\n".join(parts)
    kept = hand_written(previous, generated) if previous else []
    return "\n\n".join([generated.rstrip(), *kept]) + "\n"


def write_report(run: LabRun, report: Path, chart: Path | None) -> None:
    previous = report.read_text() if report.exists() else None
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(render(run, report, chart, previous))
