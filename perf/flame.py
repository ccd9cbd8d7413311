"""Flame graphs: py-spy samples a server while wrk loads it."""

from __future__ import annotations

import contextlib
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Final

from perf.model import Flame
from perf.procs import portable, start, stop
from perf.wrk import WrkResult

FLAME_RATE: Final = 100
"""Samples per second."""
_PY_SPY_COUNTS: Final = re.compile(r"Samples: (\d+) Errors: (\d+)")


def py_spy_argv(py_spy: str, pid: int, svg: Path, seconds: int) -> list[str]:
    """``py-spy record`` of ``pid`` and its children; py-spy writes this command line as the SVG's title."""
    return [
        portable(py_spy), "record", "--pid", str(pid), "--output", str(svg), "--format", "flamegraph",
        "--duration", str(seconds), "--rate", str(FLAME_RATE), "--nonblocking", "--subprocesses",
    ]  # fmt: skip


def record_flame(
    py_spy: str, pid: int, svg: Path, log: Path, seconds: int, load: Callable[[], WrkResult]
) -> tuple[WrkResult, Flame]:
    """``load()`` (wrk for ``seconds``) while py-spy samples ``pid`` for as long; the graph goes to ``svg``.

    Tried twice: py-spy's start (``--subprocesses`` walks /proc) failed now and then on a busy
    machine (``Sampler::new``), which once failed a CI run; a second failure is reported.
    """
    for attempt in (1, 2):
        result, flame = _record(py_spy, pid, svg, log, seconds, load)
        if flame.problem is None or attempt == 2:
            return result, flame
    raise AssertionError("unreachable")


def _record(
    py_spy: str, pid: int, svg: Path, log: Path, seconds: int, load: Callable[[], WrkResult]
) -> tuple[WrkResult, Flame]:
    svg.parent.mkdir(parents=True, exist_ok=True)
    svg.unlink(missing_ok=True)
    offset = log.stat().st_size if log.exists() else 0  # the log is appended to: read this attempt's
    spy = start(py_spy_argv(py_spy, pid, svg, seconds), log)
    try:
        result = load()
        with contextlib.suppress(subprocess.TimeoutExpired):
            spy.wait(seconds + 30)
    finally:
        code = stop(spy)
    with log.open("rb") as lines:
        lines.seek(offset)
        text = lines.read().decode(errors="replace")
    counts = _PY_SPY_COUNTS.search(text)
    samples, errors = (int(counts[1]), int(counts[2])) if counts else (None, None)
    problem = None
    if code != 0:
        problem = f"py-spy exited with {code}: {text.strip()[:300]}"
    elif not svg.exists() or svg.stat().st_size == 0 or b"<svg" not in svg.read_bytes()[:2000]:
        problem = f"py-spy wrote no SVG to {svg}: {text.strip()[-300:]}"
    return result, Flame(svg, result, samples, errors, problem)
