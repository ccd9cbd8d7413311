"""The ``logger`` slot and its wrappers: where events go, and what limits them."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from influencer_stats.algebras import EventLog
from influencer_stats.bootstrap.registry import Registry
from influencer_stats.bootstrap.wiring import Observed

LogBuilder = Callable[[Observed], Awaitable[EventLog]]
LogWrapper = Callable[[Observed, EventLog], Awaitable[EventLog]]
LOGGERS: Registry[LogBuilder] = Registry("logger")
LOG_WRAPPERS: Registry[LogWrapper] = Registry("log wrapper")


async def _json(observed: Observed) -> EventLog:
    from influencer_stats.interpreters.logging.structlog_json import StructlogEventLog

    return StructlogEventLog(observed.stdout, observed.settings.secrets(), level=observed.settings.log_level)


LOGGERS.register("all", _json, "every event as a JSON line, written at once (the talk's v1)")
LOGGERS.register(
    "dropping",
    _json,
    "the JSON logger under the rate-limit wrapper, written off the request path",
    wrappers=("rate-limit",),
)


@LOGGERS.add("silent", "writes nothing", silent=True)
async def _silent(_: Observed) -> EventLog:
    from influencer_stats.interpreters.logging.silent import SilentEventLog

    return SilentEventLog()


@LOG_WRAPPERS.add(
    "rate-limit",
    "at most INFLUENCER_STATS_LOG_RATE_LIMIT events/s, buffered, drops counted",
    scenario="flood",
)
async def _rate_limit(observed: Observed, inner: EventLog) -> EventLog:
    from influencer_stats.interpreters.logging.dropping import DroppingEventLog

    settings = observed.settings
    dropping = DroppingEventLog(
        inner, time.monotonic, limit=settings.log_rate_limit, level=settings.log_level
    )
    # Flushed once more after the flusher stops (even if it never got to run): nothing admitted is lost.
    observed.exits.callback(dropping.flush, observed.metrics.logs_dropped)
    observed.background(dropping.run_flusher(on_dropped=observed.metrics.logs_dropped), "log-flusher")
    return dropping
