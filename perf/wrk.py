"""Running wrk and reading its report.

:func:`parse_wrk` reads the text wrk 4.x prints with ``--latency`` into a
:class:`WrkResult` (times in milliseconds). It is pure, so the unit tests feed
it captured outputs; :func:`run_wrk` is the only part that starts a process.
"""

from __future__ import annotations

import math
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypedDict, Unpack

WRK: Final = "wrk"

_TIME_TO_MS: Final = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3, "h": 3600e3}
_METRIC: Final = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}

_LATENCY_LINE: Final = re.compile(r"^\s*Latency\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)", re.MULTILINE)
_PERCENTILE_LINE: Final = re.compile(r"^\s*(50|75|90|99)(?:\.0+)?%\s+(\S+)\s*$", re.MULTILINE)
_REQUESTS_LINE: Final = re.compile(r"^\s*(\d+) requests in (\S+), (\S+) read", re.MULTILINE)
_SOCKET_ERRORS: Final = re.compile(
    r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", re.MULTILINE
)
_NON_2XX: Final = re.compile(r"Non-2xx or 3xx responses: (\d+)", re.MULTILINE)
_REQUESTS_PER_SEC: Final = re.compile(r"^Requests/sec:\s+(\S+)", re.MULTILINE)
_TIME_VALUE: Final = re.compile(r"([0-9]+(?:\.[0-9]+)?)(us|ms|s|m|h)")
_METRIC_VALUE: Final = re.compile(r"([0-9]+(?:\.[0-9]+)?)([kMGT]?)")


class WrkError(Exception):
    """wrk could not run, or printed something this parser does not understand."""


@dataclass(frozen=True, slots=True)
class SocketErrors:
    """wrk's ``Socket errors`` line (all zero when wrk omits it)."""

    connect: int = 0
    read: int = 0
    write: int = 0
    timeout: int = 0

    @property
    def total(self) -> int:
        return self.connect + self.read + self.write + self.timeout

    def __str__(self) -> str:
        return f"{self.connect}/{self.read}/{self.write}/{self.timeout}"


@dataclass(frozen=True, slots=True)
class WrkResult:
    """One wrk run. Latencies are in milliseconds; NaN when wrk had nothing to measure."""

    requests: int
    duration_s: float
    requests_per_s: float
    avg_ms: float
    stdev_ms: float
    max_ms: float
    p50_ms: float | None
    p75_ms: float | None
    p90_ms: float | None
    p99_ms: float | None
    socket_errors: SocketErrors
    non_2xx: int
    """wrk's "Non-2xx or 3xx responses" (it counts statuses above 399)."""


def parse_time_ms(text: str) -> float:
    """A wrk time such as ``812.00us``, ``3.42ms``, ``1.20s`` or ``2.00m`` in milliseconds.

    wrk prints ``nan``/``-nan`` (stdev of nothing); that is NaN here.
    """
    if text.lstrip("-").lower() == "nan":
        return math.nan
    match = _TIME_VALUE.fullmatch(text)
    if match is None:
        raise WrkError(f"not a wrk time: {text!r}")
    return float(match[1]) * _TIME_TO_MS[match[2]]


def parse_metric(text: str) -> float:
    """A wrk count such as ``3.96k`` or ``283.40``."""
    match = _METRIC_VALUE.fullmatch(text)
    if match is None:
        raise WrkError(f"not a wrk number: {text!r}")
    return float(match[1]) * _METRIC[match[2]]


def parse_wrk(text: str) -> WrkResult:
    """Read wrk's report (with or without ``--latency``); raises :class:`WrkError` if it is not one.

    With no completed request wrk prints zero latencies; they are NaN here, not 0.
    """
    requests = _REQUESTS_LINE.search(text)
    rate = _REQUESTS_PER_SEC.search(text)
    latency = _LATENCY_LINE.search(text)
    if requests is None or rate is None or latency is None:
        first = text.strip().splitlines()[:3]
        raise WrkError(f"not a wrk report (no requests, Requests/sec or Latency line): {first!r}")
    percentiles = {int(m[1]): parse_time_ms(m[2]) for m in _PERCENTILE_LINE.finditer(text)}
    errors = _SOCKET_ERRORS.search(text)
    non_2xx = _NON_2XX.search(text)
    rate_text = rate[1]
    count = int(requests[1])
    if count == 0:
        percentiles = dict.fromkeys(percentiles, math.nan)
    latencies = [math.nan] * 3 if count == 0 else [parse_time_ms(latency[i]) for i in (1, 2, 3)]
    return WrkResult(
        requests=count,
        duration_s=parse_time_ms(requests[2]) / 1e3,
        requests_per_s=math.nan if rate_text.lstrip("-").lower() == "nan" else float(rate_text),
        avg_ms=latencies[0],
        stdev_ms=latencies[1],
        max_ms=latencies[2],
        p50_ms=percentiles.get(50),
        p75_ms=percentiles.get(75),
        p90_ms=percentiles.get(90),
        p99_ms=percentiles.get(99),
        socket_errors=SocketErrors(*(int(g) for g in errors.groups())) if errors else SocketErrors(),
        non_2xx=int(non_2xx[1]) if non_2xx else 0,
    )


class WrkOptions(TypedDict, total=False):
    """What a run may add to the load itself (threads, connections, duration)."""

    script: Path | None
    """A wrk Lua script (another method, a body, headers, several paths)."""
    script_args: Sequence[str]
    """The script's arguments (after ``--``)."""
    timeout_s: float | None
    """Replaces wrk's default 2 s socket timeout."""


def wrk_argv(
    url: str, *, threads: int, connections: int, duration_s: float, **options: Unpack[WrkOptions]
) -> list[str]:
    """The wrk command line (``--latency`` always: percentiles are the point)."""
    script, timeout_s, script_args = (
        options.get("script"),
        options.get("timeout_s"),
        options.get("script_args"),
    )
    return [
        WRK,
        f"-t{threads}",
        f"-c{connections}",
        f"-d{max(1, round(duration_s))}s",
        *(["--timeout", f"{timeout_s:g}s"] if timeout_s is not None else []),
        "--latency",
        *(["-s", str(script)] if script is not None else []),
        url,
        *(["--", *script_args] if script_args else []),
    ]


def run_wrk(
    url: str, *, threads: int, connections: int, duration_s: float, **options: Unpack[WrkOptions]
) -> tuple[WrkResult, str]:
    """Run wrk against ``url`` (bounded: duration + 30 s) and parse what it printed (stdout)."""
    argv = wrk_argv(url, threads=threads, connections=connections, duration_s=duration_s, **options)
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=max(1, round(duration_s)) + 30, check=False
        )
    except subprocess.TimeoutExpired as error:
        raise WrkError(f"wrk did not finish within {error.timeout:g}s") from None
    except OSError as error:
        raise WrkError(f"cannot run wrk: {error}") from None
    if done.returncode != 0:
        raise WrkError(f"wrk exited with {done.returncode}: {(done.stderr or done.stdout).strip()[:500]}")
    return parse_wrk(done.stdout), done.stdout
