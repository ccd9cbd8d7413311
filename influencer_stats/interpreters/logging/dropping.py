"""A rate-limited logger that drops what it cannot afford, and says so."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Literal, get_args

from influencer_stats.algebras import EventLog
from influencer_stats.algebras.event_log import LOG_CONTEXT

Level = Literal["debug", "info", "warning", "error"]
_Entry = tuple[Level, str, dict[str, object]]
_LEVELS: tuple[Level, ...] = get_args(Level)


class DroppingEventLog:
    """``EventLog`` wrapper: at most ``limit`` events per ``window`` seconds.

    Admitted events go into a bounded buffer and are written to ``inner`` by
    ``flush()``, which ``run_flusher`` calls off the request path; the caller
    only appends to a deque. Events over the rate, or arriving while the
    buffer is full, are dropped and counted; after each window with drops,
    one ``log.events_dropped`` event reports how many. The buffer never holds
    more than ``capacity`` entries (default ``2 * limit``), reports included:
    when it is full the report waits and its count keeps growing. The clock is
    injected. Events below ``level`` (``debug`` … ``error``) are ignored before
    the limit: they neither count against it nor as drops.
    """

    def __init__(
        self,
        inner: EventLog,
        clock: Callable[[], float],
        *,
        limit: int,
        level: str,
        window: float = 1.0,
        capacity: int | None = None,
    ) -> None:
        self._inner = inner
        self._ignored: frozenset[str] = frozenset(_LEVELS[: _LEVELS.index(level)])
        self._clock = clock
        self._limit = limit
        self._window = window
        self._capacity = capacity if capacity is not None else 2 * limit
        self._buffer: deque[_Entry] = deque()
        self._window_start = clock()
        self._admitted = 0
        self._dropped = 0
        self.dropped_total = 0
        self._reported_total = 0

    def _roll(self, now: float) -> None:
        if now - self._window_start < self._window:
            return
        if self._dropped and len(self._buffer) < self._capacity:
            # The report bypasses the rate limit (at most one per window), not
            # the capacity: if the buffer is full the count carries over.
            self._buffer.append(
                ("warning", "log.events_dropped", {"dropped": self._dropped, "window_s": self._window})
            )
            self._dropped = 0
        self._window_start = now
        self._admitted = 0

    def _log(self, level: Level, event: str, fields: dict[str, object]) -> None:
        if level in self._ignored:
            return
        self._roll(self._clock())
        if self._admitted >= self._limit or len(self._buffer) >= self._capacity:
            self._dropped += 1
            self.dropped_total += 1
            return
        self._admitted += 1
        context = LOG_CONTEXT.get()  # captured now: the flush runs on another task
        self._buffer.append((level, event, {**context, **fields} if context else fields))

    def debug(self, event: str, **fields: object) -> None:
        self._log("debug", event, fields)

    def info(self, event: str, **fields: object) -> None:
        self._log("info", event, fields)

    def warning(self, event: str, **fields: object) -> None:
        self._log("warning", event, fields)

    def error(self, event: str, **fields: object) -> None:
        self._log("error", event, fields)

    def flush(self, on_dropped: Callable[[int], None] | None = None) -> int:
        """Write every buffered event to ``inner``; returns how many.

        ``on_dropped`` receives the number of events dropped since the last flush.
        """
        self._roll(self._clock())
        if on_dropped is not None and self.dropped_total > self._reported_total:
            on_dropped(self.dropped_total - self._reported_total)
            self._reported_total = self.dropped_total
        written = 0
        inner = self._inner
        while self._buffer:
            level, event, fields = self._buffer.popleft()
            getattr(inner, level)(event, **fields)
            written += 1
        return written

    async def run_flusher(
        self,
        interval: float = 0.05,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        on_dropped: Callable[[int], None] | None = None,
    ) -> None:
        """Flush every ``interval`` seconds until cancelled, then flush once more."""
        try:
            while True:
                await sleep(interval)
                self.flush(on_dropped)
        finally:
            self.flush(on_dropped)
