"""The ``metrics`` slot: who records counters and histograms for ``/metrics``."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from influencer_stats.algebras import AllMetrics, RuntimeMetrics
from influencer_stats.bootstrap.registry import Registry
from influencer_stats.bootstrap.wiring import Checks, Resources

if TYPE_CHECKING:
    from influencer_stats.interpreters.metrics.prometheus import PrometheusMetrics

MetricsBuilder = Callable[[Resources], Awaitable[AllMetrics]]
METRICS: Registry[MetricsBuilder] = Registry("metrics")
#: How often each worker runs the readiness checks for ``influencer_stats_dependency_up``
#: (a Redis PING, a SQLite query: nothing a worker notices).
DEPENDENCY_INTERVAL_S = 2.0


@METRICS.add("prometheus", "Prometheus text format, summed over workers (PROMETHEUS_MULTIPROC_DIR)")
async def _prometheus(resources: Resources) -> AllMetrics:
    from influencer_stats.bootstrap.edge import ROUTES
    from influencer_stats.interpreters.metrics.loop_lag import monitor_loop_lag
    from influencer_stats.interpreters.metrics.prometheus import PrometheusMetrics
    from influencer_stats.version import version

    settings = resources.settings
    if settings.prometheus_multiproc_dir:
        _writable(settings.prometheus_multiproc_dir)
    metrics = PrometheusMetrics(
        ROUTES,
        settings.prometheus_multiproc_dir,
        version=version(),
        quota_budget=settings.quota_per_day or None,
    )
    resources.background(monitor_loop_lag(metrics.loop_lag), "loop-lag")
    if metrics.multiprocess:
        resources.exits.callback(metrics.publish)  # runs last: the final values of this worker
        resources.background(_publish_forever(metrics), "metrics-publisher")
    return metrics


def _writable(folder: str) -> None:
    """``StartupError`` unless a file can be written in ``folder`` (each worker writes its metrics
    there: else its snapshots fail while it serves, and its last one with a traceback at its end)."""
    import tempfile

    from influencer_stats.bootstrap.startup import StartupError

    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise StartupError.of(
            "prometheus_multiproc_dir", folder, "cannot write a file in it", error
        ) from None


@METRICS.add("none", "records nothing; /metrics says so", silent=True)
async def _none(_: Resources) -> AllMetrics:
    from influencer_stats.interpreters.metrics.noop import NoMetrics

    return NoMetrics()


async def watch_dependencies(checks: Checks, metrics: RuntimeMetrics) -> None:
    """Run every ``/readyz`` check each ``DEPENDENCY_INTERVAL_S`` and record whether it answered,
    so Prometheus sees a dependency down (``influencer_stats_dependency_up``) without a probe.

    The root starts it once everything is built (so it stops before anything closes)."""
    while True:
        for name, check in list(checks.items()):
            try:
                async with asyncio.timeout(DEPENDENCY_INTERVAL_S):
                    up = await check()
            except TimeoutError:
                up = False
            metrics.dependency(name, up)
        await asyncio.sleep(DEPENDENCY_INTERVAL_S)


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
