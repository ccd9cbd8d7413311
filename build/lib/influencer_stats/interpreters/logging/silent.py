"""A logger that writes nothing."""

from __future__ import annotations


class SilentEventLog:
    """``EventLog`` that discards every event (for benchmarks and quiet tests)."""

    def debug(self, event: str, **fields: object) -> None:
        pass

    def info(self, event: str, **fields: object) -> None:
        pass

    def warning(self, event: str, **fields: object) -> None:
        pass

    def error(self, event: str, **fields: object) -> None:
        pass
