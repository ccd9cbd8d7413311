"""Slice ``prometheus``: the metrics in Prometheus's text format, summed over workers (``--metrics prometheus``).

Its entry ``prometheus`` in the core's ``metrics`` slot is ``preferred``: the slot's default
while this slice is installed (without it the core's ``none`` is). It builds
its modules of ``interpreters/metrics`` (``prometheus``, its ``families``, the ``snapshots``
several workers share in ``PROMETHEUS_MULTIPROC_DIR``, the process's own collectors in
``runtime``, ``loop_lag``; the core's ``noop`` stays beside them), starts the event loop's lag
monitor and, with several workers, the publisher of this worker's snapshot. ``/metrics`` stays
the core's route: it answers what the chosen entry renders. The slice also holds
``deploy/prometheus`` (scrape config, recording and alert rules), ``deploy/grafana`` (a
dashboard), and their tests with a real Prometheus.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from typing import TYPE_CHECKING

from influencer_stats.bootstrap.metrics import METRICS
from influencer_stats.bootstrap.slices.slice import Slice

if TYPE_CHECKING:
    from influencer_stats.algebras import AllMetrics
    from influencer_stats.bootstrap.wiring import Resources
    from influencer_stats.interpreters.metrics.prometheus import PrometheusMetrics

SLICE = Slice(
    "prometheus",
    "metrics in Prometheus's text format, summed over workers (--metrics prometheus)",
    files=(
        "influencer_stats/interpreters/metrics/prometheus.py",
        "influencer_stats/interpreters/metrics/families.py",
        "influencer_stats/interpreters/metrics/snapshots.py",
        "influencer_stats/interpreters/metrics/runtime.py",
        "influencer_stats/interpreters/metrics/loop_lag.py",
        "deploy/prometheus",
        "deploy/grafana",
        "scripts/prometheus-up.sh",
        "tests/integration/test_prometheus*.py",
        "tests/integration/test_metrics.py",
        "tests/integration/test_metrics_monotonic.py",
        "tests/unit/test_prometheus*.py",
        "tests/unit/test_loop_lag.py",
    ),
    modules=(
        "influencer_stats.interpreters.metrics.prometheus",
        "influencer_stats.interpreters.metrics.families",
        "influencer_stats.interpreters.metrics.snapshots",
        "influencer_stats.interpreters.metrics.runtime",
        "influencer_stats.interpreters.metrics.loop_lag",
        "influencer_stats.bootstrap.slices.prometheus",
    ),
)


@METRICS.add(
    "prometheus",
    "Prometheus text format, summed over workers (PROMETHEUS_MULTIPROC_DIR)",
    preferred=True,
)
async def _prometheus(resources: Resources) -> AllMetrics:
    from influencer_stats.bootstrap.edge import ROUTES
    from influencer_stats.interpreters.metrics.loop_lag import monitor_loop_lag
    from influencer_stats.interpreters.metrics.prometheus import PrometheusMetrics
    from influencer_stats.version import revision, version

    settings = resources.settings
    if settings.prometheus_multiproc_dir:
        _writable(settings.prometheus_multiproc_dir)
    metrics = PrometheusMetrics(
        ROUTES,
        settings.prometheus_multiproc_dir,
        version=version(),
        revision=revision(),
        quota_budget=resources.quota.units(),
    )
    resources.background(monitor_loop_lag(metrics.loop_lag), "loop-lag")
    if metrics.multiprocess:
        resources.exits.callback(metrics.publish)  # runs last: the final values of this worker
        resources.background(_publish_forever(metrics), "metrics-publisher")
    return metrics


def _writable(folder: str) -> None:
    """``StartupError`` unless a file can be written in ``folder`` (each worker writes its metrics
    there: else its snapshots fail while it serves, and its last one with a traceback at its end)."""
    from influencer_stats.bootstrap.startup import StartupError

    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise StartupError.of(
            "prometheus_multiproc_dir", folder, "cannot write a file in it", error
        ) from None


async def _publish_forever(metrics: PrometheusMetrics) -> None:
    """Share this worker's metric values with the others, every ``publish_interval``."""
    failing = False
    while True:
        try:
            metrics.publish()
            failing = False
        except OSError as exc:  # a full disk must not stop the worker; the next round retries
            if not failing:  # once per streak (the logger is built after the metrics)
                print(f"influencer-stats: metrics snapshot not written: {exc}", file=sys.stderr)
            failing = True
        await asyncio.sleep(metrics.publish_interval)
