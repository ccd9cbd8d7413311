"""The perf lab: every profile under the same wrk load, a flame graph each, one report.

    python perf/run.py --profiles v1,v2,v3,v4,v5,fast --duration 30 \\
        [--threads 1 --connections 16] [--collection original|1000|10000] \\
        [--out perf/out] [--report perf/RESULTS.md] [--flames perf/flames] \\
        [--chart perf/chart.png] [--short]
    python perf/run.py --profiles fast,fast+cache=none --reference guarded --rounds 3 --duration 10
    python perf/run.py --profiles distributed,distributed+server=granian --reference fast --pin --rounds 5
    python perf/run.py --workload overlap [--rate 200 --duration 60 --seed 1]   (see perf/overlap.py)

Steps: check the tools (wrk, py-spy, matplotlib: exit 2 with how to install
them); start the YouTube double (nginx with pre-rendered answers, else the
Python double); then, in each of ``--rounds`` rounds, for each profile
measure its reference (:mod:`perf.references`: the uvicorn ``ceiling``, the
Granian ``rsgi-ceiling`` or the architecture-free ``minimal``; with
``--reference guarded``, the hand-written ``guarded``; with ``--reference
P``, the profile ``P``, measured as a profile is) and right after
it the profile: start ``main.py --profile P`` on a free port, seed the
collections, warm up, run wrk, read the memory, record a flame graph in a
separate pass (last round only), stop it; finally write the report (each
profile's ratios to its reference: medians of per-round ratios), the chart and
``<out>/results.json``.
Progress goes to stderr. Exit 0 when every step worked, 1 when a profile or
flame graph failed (the report says which), 2 for bad arguments or missing
tools, 130 when interrupted. Everything listens on 127.0.0.1 only. With ``--pin``
the servers run on CPU 0 and everything else (the lab, wrk, the double,
redis-server, py-spy) on CPU 1.

This module is the entry point and the order of the steps; each step is a
module of its own: :mod:`perf.options` (the flags), :mod:`perf.tools` (wrk,
py-spy, matplotlib), :mod:`perf.specs` over :mod:`perf.profiles` (profiles and
variants; the only module that reads the service's config), :mod:`perf.lab`
(measuring, with :mod:`perf.service`, :mod:`perf.redis_server` and
:mod:`perf.flame`), :mod:`perf.references` (which reference, in which order),
:mod:`perf.rounds` (a row from several rounds, ratios to the reference),
:mod:`perf.report`, :mod:`perf.chart` and :mod:`perf.summary` (the outputs).
"""

from __future__ import annotations

import shlex
import shutil
import signal
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Final

if __package__ in (None, ""):  # `python perf/run.py`: make `perf` importable as a package
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perf import machine
from perf.chart import draw_chart
from perf.lab import Lab, Progress
from perf.model import LabRun, Measurement
from perf.options import PUBLISHED, parse_args
from perf.procs import LabError, pin_to_load_cpu
from perf.profiles import PROFILES_SOURCE, profile_names
from perf.references import (
    GUARDED,
    GUARDED_UNCACHED,
    REFERENCE_CLIENTS,
    REFERENCES,
    reference_for,
    round_plan,
    unpairable,
)
from perf.report import write_report
from perf.rounds import Measured, rows
from perf.specs import choice_slots, lab_choices, unknown_profiles
from perf.summary import notes_for, write_results_json
from perf.tools import find_py_spy, missing_tools
from perf.upstream import Double, id_groups, youtube_double
from perf.workload import workload
from perf.wrk import WRK

#: The references whose flame graph the last round records (to read beside the profile's).
RECORDED_REFERENCES: Final = frozenset({GUARDED, GUARDED_UNCACHED})


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def measure_rounds(
    lab: Lab, plan: list[tuple[str, str | None]], double: Double, rounds: int, progress: Progress
) -> Measured:
    """Every round of ``plan``: each profile right after its reference; flame graphs in the last round
    (a profile that is the reference, ``--reference fast``: the first time it is measured there)."""
    measured: Measured = []
    for number in range(1, rounds + 1):
        if rounds > 1:
            progress(f"round {number} of {rounds}")
        this_round: list[tuple[str, str | None, Measurement]] = []
        for name, reference in plan:
            if reference is None and name not in REFERENCES:  # a profile as the reference (--reference fast)
                once = number == rounds and all(name != done for done, _, _ in this_round)
                this_round.append((name, None, lab.measure_profile(name, double, flame=once)))
            elif reference is None:
                reference_flame = number == rounds and name in RECORDED_REFERENCES
                this_round.append((name, None, lab.measure_reference(name, double, flame=reference_flame)))
            else:
                this_round.append(
                    (name, reference, lab.measure_profile(name, double, flame=number == rounds))
                )
        measured.append(this_round)
    return measured


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments[:2] == ["--workload", "overlap"]:  # quota economy: its own lab (perf/overlap.py)
        from perf import overlap

        return overlap.main(arguments[2:])
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
            f"perf/run.py: unknown profile(s) {', '.join(unknown)}: not in {PROFILES_SOURCE} "
            f"(available: {', '.join(profile_names())}; see `python main.py --list-profiles`)",
            file=sys.stderr,
        )
        return 2
    refused = [
        f"{name}: {why}"
        for name in options.profiles
        if (why := unpairable(lab_choices(name), options.reference, name)) is not None
    ]
    if refused:
        print(f"perf/run.py: --reference {options.reference}: " + "; ".join(refused), file=sys.stderr)
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
    # After describing the machine (its cores are the CPUs the lab may use), before starting anything.
    if options.settings.pin and (why := pin_to_load_cpu()) is not None:
        print(f"perf/run.py: {why}", file=sys.stderr)
        return 2
    lab = Lab(options, load, py_spy, progress)
    pairs = [(name, reference_for(lab_choices(name), options.reference)) for name in options.profiles]
    plan = round_plan(pairs)
    clients = [lab_choices(name)["video_client"] for name in options.profiles]
    clients += [REFERENCE_CLIENTS[ref] for ref, _ in plan if ref in REFERENCE_CLIENTS]
    clients += [lab_choices(ref)["video_client"] for ref, of in plan if of is None and ref not in REFERENCES]
    groups = [g for client in dict.fromkeys(clients) for g in id_groups(client, load.videos)]
    try:
        with youtube_double(options.out / "double", groups, nginx=options.nginx) as double:
            if double.kind == "python":
                progress(f"WARNING: {options.nginx} not found: using {double.note}")
            else:
                progress(f"YouTube double: {double.note}, port {double.port}")
            measured = measure_rounds(lab, plan, double, options.settings.rounds, progress)
    except KeyboardInterrupt:
        progress("interrupted: servers stopped, no report written")
        return 130
    except LabError as error:
        progress(f"FAILED: the YouTube double did not start: {error}")
        return 1
    ceiling, references, profiles = rows(measured, pairs)
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
        notes=notes_for([*profiles, *references], double),
        references=references,
        pairs=pairs,
    )
    progress(f"writing {options.chart}, {options.report} and {options.out / 'results.json'}")
    write_results_json(run, options.out / "results.json")
    draw_chart(options.chart, profiles, ceiling, references)
    if not options.report.exists() and options.report != PUBLISHED / "RESULTS.md":
        # A scratch report starts from the record, so its kept readings of the flame graphs carry over.
        options.report.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(PUBLISHED / "RESULTS.md", options.report)
    write_report(run, options.report, options.chart)
    failed = [m.name for m in [*profiles, *references, ceiling] if m.problem or (m.flame and m.flame.problem)]
    if failed:
        progress(f"done with failures: {', '.join(failed)} (see {options.report})")
        return 1
    progress(f"done: {options.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
