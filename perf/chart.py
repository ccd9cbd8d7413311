"""The report's chart: req/s and p99 per profile and reference (matplotlib, Agg backend, no display needed)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from perf.model import CEILING, Measurement

LOG_SCALE_RATIO: Final = 20.0
"""Use a log axis when the largest value is this many times the smallest."""


def _wide(values: Sequence[float]) -> bool:
    positive = [v for v in values if v > 0]
    return bool(positive) and max(positive) / min(positive) >= LOG_SCALE_RATIO


def draw_chart(
    path: Path, rows: Sequence[Measurement], ceiling: Measurement, references: Sequence[Measurement] = ()
) -> None:
    """Two bar charts side by side: req/s (ceiling dashed) and p99 latency, one bar per profile.

    ``references`` (``rsgi-ceiling``, ``minimal``) follow the profiles as grey bars.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    reference_names = {m.name for m in references}
    measured = [m for m in [*rows, *references] if m.wrk is not None]
    names = [m.name for m in measured]
    colors = ["#999999" if m.name in reference_names else "#4c72b0" for m in measured]
    p99_colors = ["#bbbbbb" if m.name in reference_names else "#dd8452" for m in measured]
    rps = [m.wrk.requests_per_s if m.wrk else 0.0 for m in measured]
    p99 = [(m.wrk.p99_ms or 0.0) if m.wrk else 0.0 for m in measured]
    rps = [0.0 if math.isnan(v) else v for v in rps]
    p99 = [0.0 if math.isnan(v) else v for v in p99]

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
    bars = left.bar(names, rps, color=colors)
    left.bar_label(bars, labels=[f"{v:,.0f}" for v in rps], fontsize=8)
    left.set_title("throughput (req/s, higher is better)")
    ceiling_rps = ceiling.rps
    if ceiling_rps and not math.isnan(ceiling_rps):
        left.axhline(ceiling_rps, color="#555555", linestyle="--", linewidth=1)
        left.annotate(
            f"{CEILING} {ceiling_rps:,.0f}",
            (0, ceiling_rps),
            xytext=(2, 3),
            textcoords="offset points",
            fontsize=8,
            color="#555555",
        )
    if _wide([*rps, ceiling_rps or 0.0]):
        left.set_yscale("log")
        left.set_title("throughput (req/s, log scale, higher is better)")

    bars = right.bar(names, p99, color=p99_colors)
    right.bar_label(bars, labels=[f"{v:,.1f}" for v in p99], fontsize=8)
    right.set_title("p99 latency (ms, lower is better)")
    if _wide(p99):
        right.set_yscale("log")
        right.set_title("p99 latency (ms, log scale, lower is better)")

    for axis in (left, right):
        axis.tick_params(axis="x", labelrotation=30)
        axis.grid(axis="y", alpha=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
