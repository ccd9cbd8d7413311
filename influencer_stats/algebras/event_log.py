"""Structured logging."""

from __future__ import annotations

from typing import Protocol


class EventLog(Protocol):
    """Structured events: a dotted event name plus key/value fields.

    Contract: calls never raise and never block on I/O for long; an
    interpreter may render, buffer, sample or drop events, but must say so
    in its docstring. Field values are JSON-friendly (str, int, float, bool,
    None, lists of those). Safe to call from concurrent tasks.
    """

    def debug(self, event: str, **fields: object) -> None: ...

    def info(self, event: str, **fields: object) -> None: ...

    def warning(self, event: str, **fields: object) -> None: ...

    def error(self, event: str, **fields: object) -> None: ...
