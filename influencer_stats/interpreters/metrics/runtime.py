"""The process's own series: ``process_*`` and ``python_gc_*``, as every Python exporter names them.

prometheus_client's ``ProcessCollector`` (CPU, memory, descriptors, start time,
from ``/proc``) and ``GCCollector`` (collections per generation) read them;
here they become plain values (:data:`RuntimeSeries`), so a worker can put
them in its snapshot file beside its counters, and back into metric families.

With several workers a process series is a fact about one process, not the
service: a scrape answered by one worker must not pass its own memory off as
the service's, and summing start times or descriptor limits means nothing.
So each worker's series carry a ``pid`` label, taken from the snapshots of the
workers still alive; a stopped worker's series go with it. (prometheus_client's
own multiprocess mode drops these collectors altogether.) With one process
they carry no label, as prometheus_client writes them.
"""

from __future__ import annotations

import platform
from collections.abc import Iterable, Iterator

from prometheus_client import CollectorRegistry, GCCollector, ProcessCollector
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

#: One series: its family's name, ``counter`` or ``gauge``, help, label pairs, value.
RuntimeSeries = tuple[str, str, str, tuple[tuple[str, str], ...], float]


class RuntimeCollector:
    """Reads this process's ``process_*`` and ``python_gc_*`` values each time it is asked."""

    def __init__(self) -> None:
        self._collectors = (ProcessCollector(registry=None), GCCollector(registry=CollectorRegistry()))

    def series(self, pid: int | None = None) -> list[RuntimeSeries]:
        """The values now; each labelled ``pid`` when given (one of several workers)."""
        extra = () if pid is None else (("pid", str(pid)),)
        found: list[RuntimeSeries] = []
        for collector in self._collectors:
            for family in collector.collect():
                for sample in family.samples:
                    labels = (*sorted(sample.labels.items()), *extra)
                    found.append((family.name, family.type, family.documentation, labels, sample.value))
        return found


def runtime_families(series: Iterable[RuntimeSeries]) -> Iterator[Metric]:
    """Metric families of ``series`` (from one process or several), in the order first seen."""
    families: dict[str, Metric] = {}
    for name, kind, documentation, labels, value in series:
        family = families.get(name)
        if family is None:
            make = CounterMetricFamily if kind == "counter" else GaugeMetricFamily
            family = families[name] = make(name, documentation, labels=[k for k, _ in labels])
        family.add_metric([v for _, v in labels], value)  # type: ignore[attr-defined]
    yield from families.values()


def build_info(name: str, version: str, revision: str = "") -> Metric:
    """The constant ``1`` labelled with the service's version, the source revision its build was
    made from ("" when the build did not know it) and the Python running it."""
    family = GaugeMetricFamily(
        name,
        "always 1: the service's version, its source revision and the Python running it",
        labels=("version", "revision", "python"),
    )
    family.add_metric((version, revision, platform.python_version()), 1.0)
    return family
