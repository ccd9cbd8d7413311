"""An ``EventLog`` that records events, for tests (structlog's LogCapture idea)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class CapturedEvent:
    level: str
    event: str
    fields: dict[str, object]


@dataclass
class CapturingEventLog:
    """Keeps every event in ``events`` (bounded by ``limit``, oldest dropped)."""

    limit: int = 10_000
    events: list[CapturedEvent] = field(default_factory=list)

    def _add(self, level: str, event: str, fields: dict[str, object]) -> None:
        if len(self.events) >= self.limit:
            del self.events[0]
        self.events.append(CapturedEvent(level, event, fields))

    def debug(self, event: str, **fields: object) -> None:
        self._add("debug", event, fields)

    def info(self, event: str, **fields: object) -> None:
        self._add("info", event, fields)

    def warning(self, event: str, **fields: object) -> None:
        self._add("warning", event, fields)

    def error(self, event: str, **fields: object) -> None:
        self._add("error", event, fields)

    def named(self, event: str) -> list[CapturedEvent]:
        """The captured events with this name, in order."""
        return [e for e in self.events if e.event == event]
