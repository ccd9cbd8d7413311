"""What builders share: the settings, one exit stack, readiness checks, and what several
builders build once (``once``: a slice's database, its Redis client).

Builders run in three stages, each seeing what the earlier ones built:
metrics (``Resources``), then the logger (``Observed``: + metrics), then
everything else (``Wiring``: + the log). The tracing and the quota (what the ``quota`` choice
built, ``bootstrap/quota.py``) are built first and shared by all three.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Final, TypeVar, cast

from influencer_stats.algebras import AllMetrics, EventLog
from influencer_stats.bootstrap.quota import NO_QUOTA, Quota
from influencer_stats.bootstrap.tracing import NO_TRACING, Tracing
from influencer_stats.settings import Settings

#: Path settings whose file a shared resource opens, by the name of the function that does (a
#: slice adds its own: ``db_path``, the ``sqlite`` slice's ``database``), so several builders may
#: declare them: each keeps its own tables in the one file, reaching it through that function.
SHARED_PATHS: Final[dict[str, str]] = {}

T = TypeVar("T")

#: A background task still running this long after its cancel is cancelled again (``_cancel``) ...
CANCEL_AGAIN_S: Final = 0.5
#: ... at most this many times in all.
CANCELS: Final = 10

#: Readiness checks by dependency name (``/readyz``).
Checks = dict[str, Callable[[], Awaitable[bool]]]


@dataclass(slots=True)
class _Shared:
    tracing: Tracing = NO_TRACING
    quota: Quota = NO_QUOTA
    once: dict[str, object] = field(default_factory=dict)


@dataclass(slots=True)
class Resources:
    """The settings and the process-wide resources every builder may use."""

    settings: Settings
    exits: AsyncExitStack
    checks: Checks
    stdout: BinaryIO
    _shared: _Shared = field(default_factory=_Shared)

    def background(self, coroutine: Awaitable[Any], name: str) -> None:
        """Run ``coroutine`` as a task until the service stops (then cancel it)."""
        task = asyncio.ensure_future(coroutine)
        task.set_name(name)
        self.exits.push_async_callback(_cancel, task)

    async def once(self, name: str, build: Callable[[], Awaitable[T]]) -> T:
        """What ``build`` makes, built the first time ``name`` is asked for and shared after
        (a resource of several builders: the quota spender, a slice's Redis client)."""
        if name not in self._shared.once:
            self._shared.once[name] = await build()
        return cast(T, self._shared.once[name])

    def made(self, name: str) -> object | None:
        """What ``once(name, …)`` built, if it was asked for already (else None)."""
        return self._shared.once.get(name)

    @property
    def tracing(self) -> Tracing:
        """What the ``tracing`` slot built: the layers and hooks every later builder asks for
        (``NO_TRACING`` until then, and with ``none``: each answers what it is given)."""
        return self._shared.tracing

    def trace_with(self, tracing: Tracing) -> None:
        """Set the tracing every later builder sees (the root's first step)."""
        self._shared.tracing = tracing

    @property
    def quota(self) -> Quota:
        """What the ``quota`` slot built: the day's budget every later builder asks
        (``NO_QUOTA`` until then, and with ``none``: no budget)."""
        return self._shared.quota

    def count_with(self, quota: Quota) -> None:
        """Set the quota every later builder sees (the root's second step, before the metrics)."""
        self._shared.quota = quota

    def observed(self, metrics: AllMetrics) -> Observed:
        """The next stage: these resources plus the metrics."""
        return Observed(self.settings, self.exits, self.checks, self.stdout, self._shared, metrics=metrics)


@dataclass(slots=True)
class Observed(Resources):
    """Resources plus the metrics, every role (what loggers are built with)."""

    metrics: AllMetrics = field(kw_only=True)

    def wired(self, log: EventLog) -> Wiring:
        """The last stage: these resources, the metrics and the log."""
        return Wiring(
            self.settings,
            self.exits,
            self.checks,
            self.stdout,
            self._shared,
            metrics=self.metrics,
            log=log,
        )


@dataclass(slots=True)
class Wiring(Observed):
    """Resources, metrics and the log (what every other builder is built with).

    ``quota`` (on ``Resources``) is built before any video builder runs, so the YouTube base
    (which spends it) and the per-video caches (which stretch freshness by how it is spent) get
    the same one whatever order they are built in.
    """

    log: EventLog = field(kw_only=True)


async def _cancel(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` and wait for its end: cancelled again each ``CANCEL_AGAIN_S`` it goes on,
    ``CANCELS`` times at most (then a ``RuntimeError``; the exit stack closes the rest).

    Once is not enough: on Python 3.11 ``asyncio.wait_for`` returns what it waited for when the
    cancel comes as that completes, and redis-py awaits every command's write that way, so a
    loop's ``await client.ping()`` can swallow the cancel and the loop goes on (a close awaiting
    it hung until the test's timeout, a worker until its parent killed it: exit 1).
    """
    for _ in range(CANCELS):
        task.cancel()
        await asyncio.wait({task}, timeout=CANCEL_AGAIN_S)
        if task.done():
            with suppress(asyncio.CancelledError):
                await task  # its own failure, if it failed
            return
    name = task.get_name() if isinstance(task, asyncio.Task) else repr(task)
    raise RuntimeError(f"background task {name} still runs after {CANCELS} cancels")
