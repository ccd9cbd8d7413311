"""Several rounds made into rows: a profile's median round, a reference's median measurement, and
a profile's ratios to its reference as medians of per-round ratios."""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Callable, Sequence

from perf.model import CEILING, Comparison, Measurement
from perf.references import REFERENCES, profile_references
from perf.wrk import WrkResult


def median_round(rounds: Sequence[Measurement]) -> Measurement:
    """One row from several rounds of one profile: its median round by req/s.

    A round that failed fails the row. The flame graph is the last round's (only it records
    one). With several rounds a note lists req/s by round (the ratios to the reference in
    each round are the comparison's, :func:`compare`).
    """
    settled = _settled(rounds)
    if settled is not None:
        return settled
    middle = _lower_median(rounds)
    by_round = " / ".join(f"{(m.rps or 0.0):,.0f}" for m in rounds)
    note = f"req/s by round {by_round} (the row is the median round){_cpu_by_round(rounds)}"
    return dataclasses.replace(middle, flame=rounds[-1].flame, notes=(*middle.notes, note))


def _cpu_by_round(measurements: Sequence[Measurement]) -> str:
    """``; server CPU per request by round 41.2 / 40.8 µs``, or nothing when none was read."""
    known = [m.cpu_us_per_request for m in measurements]
    if all(us is None for us in known):
        return ""
    return (
        "; server CPU per request by round "
        + " / ".join("—" if us is None else f"{us:.1f}" for us in known)
        + " µs"
    )


def _settled(measurements: Sequence[Measurement]) -> Measurement | None:
    """The row without a median: the only measurement, or the first that failed (it fails the row)."""
    if len(measurements) == 1:
        return measurements[0]
    return next((m for m in measurements if m.problem or m.wrk is None), None)


def _lower_median(measurements: Sequence[Measurement]) -> Measurement:
    """The lower median by req/s: a real measurement, not an average."""
    ordered = sorted(measurements, key=lambda m: m.rps or 0.0)
    return ordered[(len(ordered) - 1) // 2]


def reference_row(by_round: Sequence[Sequence[Measurement]]) -> Measurement:
    """One row from every measurement of a reference, grouped by round (one per profile it is paired with).

    The row is its median measurement by req/s; a failed measurement fails the row. A
    note gives req/s of every measurement, ``+`` between those of one round. A flame graph
    (``guarded`` records one in the last round) is the last one recorded.
    """
    flat = [m for group in by_round for m in group]
    settled = _settled(flat)
    if settled is not None:
        return settled
    middle = _lower_median(flat)
    flame = next((m.flame for m in reversed(flat) if m.flame is not None), None)
    rounds = " / ".join(" + ".join(f"{(m.rps or 0.0):,.0f}" for m in group) for group in by_round)
    per_round = {len(group) for group in by_round}
    beside = (
        ""
        if per_round == {1}
        else "measured right before each profile it is the reference of, `+` between one round's; "
    )
    note = f"req/s by round {rounds} ({beside}the row is the median measurement){_cpu_by_round(flat)}"
    return dataclasses.replace(middle, flame=flame, notes=(*middle.notes, note))


def ratio(profile: float | None, reference: float | None) -> float | None:
    """``profile / reference``, or None when either is missing, not a number, or the reference is 0."""
    if profile is None or reference is None or math.isnan(profile) or math.isnan(reference):
        return None
    return profile / reference if reference > 0 else None


def median_ratio(ratios: Sequence[float | None]) -> float | None:
    """The median of the known ratios (the mean of the middle two for an even count); None if none is known."""
    known = [r for r in ratios if r is not None]
    return statistics.median(known) if known else None


def _per_round(
    profile: Sequence[Measurement],
    reference: Sequence[Measurement],
    number: Callable[[WrkResult], float | None],
) -> tuple[float | None, ...]:
    return tuple(
        ratio(number(p.wrk), number(r.wrk)) if p.wrk and r.wrk and not (p.problem or r.problem) else None
        for p, r in zip(profile, reference, strict=True)
    )


def compare(profile: Sequence[Measurement], reference: Sequence[Measurement], name: str) -> Comparison:
    """A profile's rounds against the reference measured right before each: per-round ratios and their medians."""
    rps = _per_round(profile, reference, lambda w: w.requests_per_s)
    p50 = _per_round(profile, reference, lambda w: w.p50_ms)
    p99 = _per_round(profile, reference, lambda w: w.p99_ms)
    cpu = tuple(
        ratio(p.cpu_us_per_request, r.cpu_us_per_request) for p, r in zip(profile, reference, strict=True)
    )
    return Comparison(
        reference=name,
        rps=median_ratio(rps),
        p50=median_ratio(p50),
        p99=median_ratio(p99),
        rps_by_round=rps,
        p50_by_round=p50,
        p99_by_round=p99,
        cpu=median_ratio(cpu),
        cpu_by_round=cpu,
    )


def fmt_times(value: float | None) -> str:
    """A ratio as ``0.87×`` (``—`` when unknown)."""
    return "—" if value is None else f"{value:.2f}×"


def comparison_note(comparison: Comparison) -> str:
    """Every round's ratios, for the report's notes."""

    def rounds(values: Sequence[float | None]) -> str:
        return " / ".join(fmt_times(v) for v in values)

    cpu = (
        f"; server CPU per request {rounds(comparison.cpu_by_round)} (median {fmt_times(comparison.cpu)})"
        if comparison.cpu is not None
        else ""
    )
    return (
        f"× {comparison.reference} by round (profile / reference measured right before it): "
        f"req/s {rounds(comparison.rps_by_round)}; p50 {rounds(comparison.p50_by_round)}; "
        f"p99 {rounds(comparison.p99_by_round)} (the table shows the medians: "
        f"{fmt_times(comparison.rps)}, {fmt_times(comparison.p50)}, {fmt_times(comparison.p99)}){cpu}"
    )


def with_comparison(row: Measurement, comparison: Comparison) -> Measurement:
    """``row`` carrying its comparison, and a note listing its per-round ratios."""
    return dataclasses.replace(row, comparison=comparison, notes=(*row.notes, comparison_note(comparison)))


#: Per round, in the order measured: each measurement's name, its reference (None for a reference
#: itself) and what it measured.
Measured = list[list[tuple[str, str | None, Measurement]]]


def rows(
    measured: Measured, pairs: Sequence[tuple[str, str]]
) -> tuple[Measurement, list[Measurement], list[Measurement]]:
    """The uvicorn ceiling's row, the other references' rows and the profiles' rows, each with its ratios.

    A profile's ratios pair each of its rounds with the reference measured right
    before it in that round (:func:`perf.references.round_plan`).
    """
    by_reference: dict[str, list[list[Measurement]]] = {}
    profile_rounds: dict[str, list[Measurement]] = {spec: [] for spec, _ in pairs}
    beside: dict[str, list[Measurement]] = {spec: [] for spec, _ in pairs}
    for this_round in measured:
        groups: dict[str, list[Measurement]] = {}
        previous: Measurement | None = None
        for name, reference, m in this_round:
            if reference is None:
                groups.setdefault(name, []).append(m)
            else:
                assert previous is not None and previous.name == reference, "a profile follows its reference"
                profile_rounds[name].append(m)
                beside[name].append(previous)
            previous = m
        for name, group in groups.items():
            by_reference.setdefault(name, []).append(group)
    profiles = [
        with_comparison(median_round(profile_rounds[spec]), compare(profile_rounds[spec], beside[spec], ref))
        for spec, ref in pairs
    ]
    ceiling = reference_row(by_reference[CEILING])
    names = [*REFERENCES, *profile_references(pairs)]
    references = [reference_row(by_reference[r]) for r in names if r != CEILING and r in by_reference]
    return ceiling, references, profiles
