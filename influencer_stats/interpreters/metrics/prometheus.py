"""Prometheus metrics, correct with one process or many, cheap on the hot path.

Recording is a dict increment and, for a histogram, one ``bisect`` into a
list of bucket counts: no lock, no per-bucket Python loop. prometheus_client
takes a lock per increment and walks the buckets in Python; in the perf lab
that cost the ``fast`` profile about 8 % of its throughput (three metric
updates per request), so values live here and prometheus_client only renders
them, through a custom collector (its public ``MetricFamily`` API).

All recording happens on the event loop's thread (request handling, the
cache, the log flusher, the loop-lag monitor), so nothing is shared between
threads and no lock is needed.

Every label comes from a closed set, whatever a client sends: a request's
route is one of the route templates or ``unmatched``, its method one of
HTTP's common methods or ``other``, its status a registered status code or
its class (``4xx``). (A server that passed any method name through used to
grow ``/metrics`` and the worker by a series per name.)

Several worker processes: each writes a snapshot of its values to
``<multiprocess_dir>/<pid>.json`` every ``publish_interval`` seconds, when
it stops, and whenever it is scraped, before it answers (:mod:`.snapshots`). A
scrape of any worker adds its own live values to every other worker's last
snapshot, so a scrape lags the other workers by at most one interval, and no
counter goes down from one scrape to the next whichever worker answers each:
what a worker showed is in its file before the next scrape reads it. (When a
scrape only read, worker A could show its live 1,000 and worker B, scraped
next, A's file of a second before: 24 of 218 scrapes under load went down.)
Counters and histograms of stopped workers keep counting (as Prometheus
expects of a counter); the breaker gauge is the maximum over
workers still alive. The process's own series (``process_*``, ``python_gc_*``)
come once per live worker, labelled ``pid`` (:mod:`.runtime` says why).

Beside those: ``influencer_stats_build_info`` (the version, the revision and the Python),
the day's quota budget when there is one, and whether each dependency
``/readyz`` checks answers, as the composition root last found it
(:meth:`PrometheusMetrics.dependency`). The names are in :mod:`.families`.
"""

from __future__ import annotations

import os
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from contextlib import suppress
from http import HTTPStatus
from pathlib import Path
from typing import Final

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from influencer_stats.algebras.metrics import RequestRecorder
from influencer_stats.interpreters.metrics.families import (
    CACHE,
    COUNTERS,
    DROPPED,
    HISTOGRAMS,
    LAG,
    LATENCY,
    LATENCY_BUCKETS,
    QUOTA_SPENT,
    QUOTA_STALE,
    REQUESTS,
    SAVED,
    UPSTREAM,
    UPSTREAM_LATENCY,
    VIDEO_CACHE,
    families,
)
from influencer_stats.interpreters.metrics.runtime import RuntimeCollector
from influencer_stats.interpreters.metrics.snapshots import (
    Labels,
    Snapshot,
    merge,
    other_snapshots,
    write_snapshot,
)

__all__ = ["DROPPED", "LAG", "METHOD_LABELS", "REQUESTS", "UNMATCHED", "PrometheusMetrics", "status_label"]

#: The ``method`` label's values, besides ``other``.
METHOD_LABELS: Final = frozenset(
    {"CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE"}
)
UNMATCHED: Final = "unmatched"
_STATUS_LABELS: Final = {int(status): str(int(status)) for status in HTTPStatus}


def status_label(status: int) -> str:
    """A registered status code as itself, any other as its class (``"4xx"``), or ``"other"``."""
    label = _STATUS_LABELS.get(status)
    if label is not None:
        return label
    return f"{status // 100}xx" if 100 <= status <= 599 else "other"


class _Histogram:
    """Bucket counts (the last one is ``+Inf``) and the sum of observations."""

    __slots__ = ("bounds", "counts", "total")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.total = 0.0

    def observe(self, value: float) -> None:
        # bisect_left: a value equal to a bound falls into that bound's bucket (le).
        self.counts[bisect_left(self.bounds, value)] += 1
        self.total += value


class PrometheusMetrics:
    """``AllMetrics`` (every role) in the Prometheus text format.

    With ``multiprocess_dir`` (an empty directory every worker of the service
    shares, ``PROMETHEUS_MULTIPROC_DIR``), ``render`` adds up every worker;
    the composition root calls :meth:`publish` every ``publish_interval``
    seconds and once at shutdown. Without it, ``render`` shows this process.
    ``routes`` are the route labels it keeps (the service's route templates;
    any other route is counted as ``unmatched``); ``version`` is the service's and
    ``revision`` its build's source revision, for ``influencer_stats_build_info``; ``quota_budget`` the units it may spend
    per quota day (None: no budget).
    """

    publish_interval = 1.0

    def __init__(
        self,
        routes: Iterable[str],
        multiprocess_dir: str | None = None,
        pid: int | None = None,
        *,
        version: str = "unknown",
        revision: str = "",
        quota_budget: int | None = None,
    ) -> None:
        self.version, self.revision, self.quota_budget = version, revision, quota_budget
        self._routes = frozenset((*routes, UNMATCHED))
        self._dir = Path(multiprocess_dir) if multiprocess_dir else None
        self._pid = os.getpid() if pid is None else pid
        self._counters: dict[str, dict[Labels, float]] = {name: {} for name in COUNTERS}
        self._histograms: dict[str, dict[Labels, _Histogram]] = {
            name: {} if spec.labels else {(): _Histogram(spec.buckets)} for name, spec in HISTOGRAMS.items()
        }
        self._breaker_open = 0.0
        self._quota_left: float | None = None
        self._dependencies: dict[str, float] = {}
        self._runtime = RuntimeCollector()
        # The hot path's direct handles: one dict lookup each, no label tuple built twice.
        self._requests = self._counters[REQUESTS]
        self._latency = self._histograms[LATENCY]
        self._cache = self._counters[CACHE]
        self._upstream = self._counters[UPSTREAM]
        self._upstream_latency = self._histograms[UPSTREAM_LATENCY][()]
        self._lag = self._histograms[LAG][()]
        self._registry = CollectorRegistry(auto_describe=False)
        self._registry.register(_Collector(self))

    @property
    def multiprocess(self) -> bool:
        return self._dir is not None

    def request(self, route: str, method: str, status: int, seconds: float) -> None:
        if route not in self._routes:
            route = UNMATCHED
        if method not in METHOD_LABELS:
            method = "other"
        key = (route, method, status_label(status))
        requests = self._requests
        requests[key] = requests.get(key, 0) + 1
        histogram = self._latency.get((route,))
        if histogram is None:
            histogram = self._latency[(route,)] = _Histogram(LATENCY_BUCKETS)
        histogram.observe(seconds)

    def recorder(self, route: str, method: str) -> RequestRecorder:
        """``request`` for one route and method: the labels resolved once, a series key per status
        kept, the latency histogram held once it exists (perf/RESULTS.md, "The cached path by
        structure": 0.20 µs a request against ``request``'s 0.32)."""
        if route not in self._routes:
            route = UNMATCHED
        if method not in METHOD_LABELS:
            method = "other"
        requests, latency, route_key = self._requests, self._latency, (route,)
        keys: dict[int, tuple[str, str, str]] = {}
        histogram = latency.get(route_key)  # else created by the first request, as ``request`` does

        def record(status: int, seconds: float) -> None:
            nonlocal histogram
            key = keys.get(status)
            if key is None:
                key = (route, method, status_label(status))
                if status in _STATUS_LABELS:  # a closed set: the kept keys stay bounded
                    keys[status] = key
            requests[key] = requests.get(key, 0) + 1
            if histogram is None:
                histogram = latency.get(route_key)
                if histogram is None:
                    histogram = latency[route_key] = _Histogram(LATENCY_BUCKETS)
            histogram.observe(seconds)

        return record

    def upstream_call(self, outcome: str, seconds: float) -> None:
        key = (outcome,)
        self._upstream[key] = self._upstream.get(key, 0) + 1
        self._upstream_latency.observe(seconds)

    def cache_event(self, kind: str) -> None:
        key = (kind,)
        self._cache[key] = self._cache.get(key, 0) + 1

    def loop_lag(self, seconds: float) -> None:
        self._lag.observe(seconds)

    def logs_dropped(self, count: int) -> None:
        dropped = self._counters[DROPPED]
        dropped[()] = dropped.get((), 0) + count

    def breaker_state(self, state: str) -> None:
        self._breaker_open = 0.0 if state == "closed" else 1.0

    def video_cache_event(self, kind: str, count: int) -> None:
        self._add(VIDEO_CACHE, (kind,), count)

    def calls_saved(self, by: str, count: int) -> None:
        self._add(SAVED, (by,), count)

    def quota(self, spent: int, left: int | None) -> None:
        if spent:
            self._add(QUOTA_SPENT, (), spent)
        self._quota_left = None if left is None else float(left)

    def quota_stale_answer(self) -> None:
        self._add(QUOTA_STALE, (), 1)

    def dependency(self, name: str, up: bool) -> None:
        """Whether dependency ``name`` (a ``/readyz`` check) answered when last checked."""
        self._dependencies[name] = 1.0 if up else 0.0

    def _add(self, name: str, key: Labels, count: float) -> None:
        series = self._counters[name]
        series[key] = series.get(key, 0) + count

    def snapshot(self) -> Snapshot:
        """A copy of this process's values, and its ``process_*`` and ``python_gc_*`` series now
        (labelled with its pid when it is one of several workers)."""
        return Snapshot(
            {name: dict(series) for name, series in self._counters.items()},
            {
                name: {labels: (list(h.counts), h.total) for labels, h in series.items()}
                for name, series in self._histograms.items()
            },
            self._breaker_open,
            self._quota_left,
            dict(self._dependencies),
            self._runtime.series(self._pid if self._dir is not None else None),
        )

    def publish(self) -> None:
        """Write this process's snapshot for the other workers (no-op with one process)."""
        if self._dir is not None:
            write_snapshot(self._dir, self._pid, self.snapshot())

    def snapshots(self) -> list[tuple[Snapshot, bool]]:
        """This process's live values, then every other worker's last snapshot, each with "alive".

        With several workers, the live values are written to this worker's file first: a value a
        scrape shows is never more than its file holds when another worker is scraped next.
        """
        mine = self.snapshot()
        if self._dir is None:
            return [(mine, True)]
        with suppress(OSError):  # a full disk: the scrape is still answered (the publisher says so)
            write_snapshot(self._dir, self._pid, mine)
        return [(mine, True), *other_snapshots(self._dir, self._pid)]

    def render(self) -> tuple[bytes, str]:
        return generate_latest(self._registry), CONTENT_TYPE_LATEST


class _Collector:
    """Turns the merged values into metric families for prometheus_client to render."""

    def __init__(self, metrics: PrometheusMetrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        metrics = self._metrics
        return families(merge(metrics.snapshots()), metrics.version, metrics.quota_budget, metrics.revision)
