"""What one lab run measured: plain data, shared by the runner, the report and the chart."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from perf.machine import Machine
from perf.procs import Memory
from perf.wrk import WrkResult

CEILING: str = "ceiling"


@dataclass(frozen=True, slots=True)
class Flame:
    """A py-spy flame graph and the load it was recorded under."""

    path: Path
    wrk: WrkResult | None
    """wrk's numbers while py-spy sampled (the measured pass itself in concurrent mode)."""
    samples: int | None = None
    errors: int | None = None
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class Comparison:
    """A profile against its reference: each ratio the median of the per-round ratios (profile / reference).

    A round whose profile or reference failed (or has no such number) has ``None`` there;
    a median is over the rounds that have one (None when none has).
    """

    reference: str
    rps: float | None
    p50: float | None
    p99: float | None
    rps_by_round: tuple[float | None, ...] = ()
    p50_by_round: tuple[float | None, ...] = ()
    p99_by_round: tuple[float | None, ...] = ()
    cpu: float | None = None
    """Server CPU per request, profile over reference (above 1: the profile burns more per answer)."""
    cpu_by_round: tuple[float | None, ...] = ()


@dataclass(frozen=True, slots=True)
class Measurement:
    """One profile (or the ceiling) under wrk."""

    name: str
    runs: str
    wrk: WrkResult | None = None
    memory: Memory | None = None
    flame: Flame | None = None
    log_path: Path | None = None
    log_bytes: int | None = None
    startup_s: float | None = None
    problem: str | None = None
    """Why it could not be measured (the row is empty)."""
    notes: tuple[str, ...] = ()
    """Measured, but worth a look."""
    comparison: Comparison | None = None
    """A profile's ratios to its reference (None for a reference)."""
    cpu_s: float | None = None
    """CPU seconds (user + system, every thread) the server's processes used during the measured pass."""

    @property
    def rps(self) -> float | None:
        return self.wrk.requests_per_s if self.wrk else None

    @property
    def cpu_us_per_request(self) -> float | None:
        """Server CPU per answered request, in µs: steadier than req/s on a shared machine, which
        slows the server down by taking its cores, not by making each answer cost more."""
        if self.cpu_s is None or self.wrk is None or not self.wrk.requests:
            return None
        return self.cpu_s / self.wrk.requests * 1e6


@dataclass(frozen=True, slots=True)
class Settings:
    """How the load was applied (the same for every row)."""

    threads: int
    connections: int
    duration_s: int
    warmup_s: int
    flame_duration_s: int
    flame_mode: str
    collection: str
    short: bool
    rounds: int = 1
    """Each round measures every profile again, each right after its reference; a row is its median round."""
    pin: bool = False
    """``--pin``: the servers on one CPU (:data:`perf.procs.SERVER_CPU`), everything else on the other."""


@dataclass(frozen=True, slots=True)
class LabRun:
    """Everything the report shows."""

    command: str
    started_at: str
    elapsed_s: float
    machine: Machine
    settings: Settings
    workload: str
    choice_slots: str
    """What the 'what it runs' column lists, e.g. ``server / video client / store / ...``."""
    double: str
    double_kind: str
    ceiling: Measurement
    profiles: list[Measurement]
    load_before: str
    load_after: str
    notes: list[str] = field(default_factory=list)
    references: list[Measurement] = field(default_factory=list)
    """The Granian references measured (``rsgi-ceiling``, ``minimal``); the uvicorn one is ``ceiling``."""
    pairs: list[tuple[str, str]] = field(default_factory=list)
    """``(profile spec, its reference)``, in the profiles' order."""
