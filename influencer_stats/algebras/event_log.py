"""Structured logging."""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Protocol

#: Fields bound to every log line of the current request (e.g. its request id). The HTTP
#: edge sets them; every ``EventLog`` interpreter adds them to the events logged while
#: they are set (one that writes later, from another task, captures them at call time).
LOG_CONTEXT: ContextVar[Mapping[str, object]] = ContextVar("log_context", default={})  # noqa: B039 - never mutated


class EventLog(Protocol):
    """Structured events: a dotted event name plus key/value fields.

    Contract: calls never raise and never block on I/O for long; an
    interpreter may render, buffer, sample or drop events, but must say so
    in its docstring. Field values are JSON-friendly (str, int, float, bool,
    None, lists of those). The fields bound in ``LOG_CONTEXT`` when an event is
    logged belong to it. Safe to call from concurrent tasks.

    Output, for a logger registered in ``bootstrap/logs.py`` (what the
    contract suite, ``tests/contract/test_event_log.py``, and the registry
    test read back): the stream the root gives it (``Wiring.stdout``: the
    process's standard output), one JSON object per line and per event, in
    the order logged, with ``event`` (the dotted name), ``level`` (``debug`` …
    ``error``), ``timestamp`` and every field at the top level; everything is
    written by the time the root has closed it (a buffering logger flushes on
    close). A logger that writes nothing by design says so in its registry
    entry.
    """

    def debug(self, event: str, **fields: object) -> None: ...

    def info(self, event: str, **fields: object) -> None: ...

    def warning(self, event: str, **fields: object) -> None: ...

    def error(self, event: str, **fields: object) -> None: ...
