"""What a run leaves besides the report: ``results.json`` and the notes the report lists."""

from __future__ import annotations

import dataclasses
import json
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from perf.model import LabRun, Measurement
from perf.service import ignored_settings
from perf.upstream import Double


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
    """The report's notes: the double, what each server logged, the environment the lab ignored."""
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
    dropped = ignored_settings()
    if dropped:
        notes.append(f"Ignored from the environment, so each profile runs as declared: {', '.join(dropped)}.")
    return notes
