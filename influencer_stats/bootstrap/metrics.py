"""The ``metrics`` slot: who records counters and histograms for ``/metrics``.

The core registers ``none`` (records nothing; ``/metrics`` says so), the slot's default; the
``prometheus`` slice registers its entry, ``preferred``: the default while it is installed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from influencer_stats.algebras import AllMetrics, RuntimeMetrics
from influencer_stats.bootstrap.registry import Registry
from influencer_stats.bootstrap.wiring import Checks, Resources

MetricsBuilder = Callable[[Resources], Awaitable[AllMetrics]]
METRICS: Registry[MetricsBuilder] = Registry("metrics")
#: How often each worker runs the readiness checks for ``influencer_stats_dependency_up``
#: (a Redis PING, a SQLite query: nothing a worker notices).
DEPENDENCY_INTERVAL_S = 2.0


@METRICS.add("none", "records nothing; /metrics says so", silent=True)
async def _none(_: Resources) -> AllMetrics:
    from influencer_stats.interpreters.metrics.noop import NoMetrics

    return NoMetrics()


async def watch_dependencies(checks: Checks, metrics: RuntimeMetrics) -> None:
    """Run every ``/readyz`` check each ``DEPENDENCY_INTERVAL_S`` and record whether it answered,
    so the metrics show a dependency down (``influencer_stats_dependency_up``) without a probe.

    The root starts it once everything is built (so it stops before anything closes), unless
    the metrics chosen are ``silent``."""
    while True:
        for name, check in list(checks.items()):
            try:
                async with asyncio.timeout(DEPENDENCY_INTERVAL_S):
                    up = await check()
            except TimeoutError:
                up = False
            metrics.dependency(name, up)
        await asyncio.sleep(DEPENDENCY_INTERVAL_S)
