"""Several rounds of one profile made into one row."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from perf.model import Measurement


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
