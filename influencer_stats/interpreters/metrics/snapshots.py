"""Sharing metric values between worker processes: snapshot files, and their sum.

Each worker writes its values to ``<directory>/<pid>.json`` (a temporary file,
then an atomic rename); a scrape of any worker reads every other worker's last
file and adds them up (:func:`merge`). Counters and histograms of stopped
workers keep counting (as Prometheus expects of a counter); the gauges are
taken over workers still alive, and so are the process's own series (:mod:`.runtime`),
one set per live worker.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from influencer_stats.interpreters.metrics.runtime import RuntimeSeries

Labels = tuple[str, ...]


@dataclass(slots=True)
class Snapshot:
    """One process's values, as written to and read from a snapshot file."""

    counters: dict[str, dict[Labels, float]]
    histograms: dict[str, dict[Labels, tuple[list[int], float]]]
    breaker_open: float
    quota_left: float | None = None
    #: 1 or 0 by dependency (``/readyz``'s checks), as this process last saw it.
    dependencies: dict[str, float] = field(default_factory=dict)
    runtime: list[RuntimeSeries] = field(default_factory=list)

    def to_json(self) -> bytes:
        return json.dumps(
            {
                "counters": {n: [[list(k), v] for k, v in s.items()] for n, s in self.counters.items()},
                "histograms": {
                    n: [[list(k), c, t] for k, (c, t) in s.items()] for n, s in self.histograms.items()
                },
                "breaker_open": self.breaker_open,
                "quota_left": self.quota_left,
                "dependencies": self.dependencies,
                "runtime": [[n, k, h, [list(p) for p in labels], v] for n, k, h, labels, v in self.runtime],
            }
        ).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> Snapshot:
        document = json.loads(raw)
        return cls(
            {n: {tuple(k): float(v) for k, v in rows} for n, rows in document["counters"].items()},
            {
                n: {tuple(k): ([int(x) for x in c], float(t)) for k, c, t in rows}
                for n, rows in document["histograms"].items()
            },
            float(document["breaker_open"]),
            None if document.get("quota_left") is None else float(document["quota_left"]),
            {str(name): float(up) for name, up in document.get("dependencies", {}).items()},
            [
                (str(n), str(k), str(h), tuple((str(a), str(b)) for a, b in labels), float(v))
                for n, k, h, labels, v in document.get("runtime", [])
            ],
        )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - exists, owned by someone else
        return True
    return True


def write_snapshot(directory: Path, pid: int, snapshot: Snapshot) -> None:
    """Replace worker ``pid``'s snapshot file in ``directory`` at once (never half written)."""
    target = directory / f"{pid}.json"
    partial = directory / f".{pid}.json.tmp"
    partial.write_bytes(snapshot.to_json())
    os.replace(partial, target)


def other_snapshots(directory: Path, pid: int) -> list[tuple[Snapshot, bool]]:
    """Every other worker's last snapshot in ``directory``, each with whether it is alive."""
    found = []
    for path in sorted(directory.glob("*.json")):
        if not path.stem.isdigit() or int(path.stem) == pid:
            continue
        try:
            found.append((Snapshot.from_json(path.read_bytes()), _alive(int(path.stem))))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # being replaced or foreign: the next scrape reads it
    return found


def merge(snapshots: list[tuple[Snapshot, bool]]) -> Snapshot:
    """Counters and histograms summed over all snapshots; over live ones, the breaker gauge's
    max, the quota gauge's min (the most spent anyone has seen), each dependency's min (down
    if any worker finds it down) and every worker's runtime series."""
    counters: dict[str, dict[Labels, float]] = {}
    histograms: dict[str, dict[Labels, tuple[list[int], float]]] = {}
    breaker = 0.0
    quota_left: float | None = None
    dependencies: dict[str, float] = {}
    runtime: list[RuntimeSeries] = []
    for snapshot, alive in snapshots:
        for name, series in snapshot.counters.items():
            merged = counters.setdefault(name, {})
            for labels, value in series.items():
                merged[labels] = merged.get(labels, 0.0) + value
        for name, hseries in snapshot.histograms.items():
            hmerged = histograms.setdefault(name, {})
            for labels, (counts, total) in hseries.items():
                before = hmerged.get(labels)
                if before is None:
                    hmerged[labels] = (list(counts), total)
                elif len(before[0]) == len(counts):
                    hmerged[labels] = (
                        [a + b for a, b in zip(before[0], counts, strict=True)],
                        before[1] + total,
                    )
        if alive:
            breaker = max(breaker, snapshot.breaker_open)
            if snapshot.quota_left is not None:
                quota_left = (
                    snapshot.quota_left if quota_left is None else min(quota_left, snapshot.quota_left)
                )
            for name, up in snapshot.dependencies.items():
                dependencies[name] = min(up, dependencies.get(name, up))
            runtime.extend(snapshot.runtime)
    return Snapshot(counters, histograms, breaker, quota_left, dependencies, runtime)
