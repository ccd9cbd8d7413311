"""Every event rendered as one JSON line, synchronously (the talk's v1 logger)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, MutableMapping
from typing import Any, BinaryIO

import orjson
import structlog

from influencer_stats.algebras.event_log import LOG_CONTEXT
from influencer_stats.interpreters.logging.redaction import Redactor


def _bind_request_context(_: Any, __: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    context = LOG_CONTEXT.get()
    if context:
        for name, value in context.items():
            event_dict.setdefault(name, value)
    return event_dict


class _ReaderMayGo(structlog.BytesLogger):
    """A ``BytesLogger`` that stops writing once the stream's reader has gone (``main.py | head -1``):
    an ``EventLog`` call never raises, so a closed stdout must not fail a request or the shutdown."""

    gone = False

    def msg(self, message: bytes) -> None:
        if self.gone:
            return
        try:
            super().msg(message)
        except BrokenPipeError:
            self.gone = True

    log = debug = info = warn = warning = msg
    fatal = failure = err = error = critical = exception = msg


def json_lines_logger(stream: BinaryIO, secrets: Iterable[str] = (), level: str = "debug") -> Any:
    """A structlog logger writing JSON lines to ``stream``, configured locally.

    No global ``structlog.configure``: two loggers in one process (tests) do
    not interfere. Request fields (``LOG_CONTEXT``) are bound to every line;
    secrets are redacted last, after everything else has been added. Events
    below ``level`` (``debug`` … ``error``) cost a call that returns at once.
    """
    return structlog.wrap_logger(
        _ReaderMayGo(stream),
        processors=[
            _bind_request_context,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            Redactor(secrets),
            structlog.processors.JSONRenderer(serializer=orjson.dumps),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelNamesMapping()[level.upper()]),
        cache_logger_on_first_use=True,
    )


class StructlogEventLog:
    """``EventLog`` that renders and writes every event, every level, right away.

    Each call serialises JSON and performs a write on the caller's task: cheap
    to reason about, expensive under load (the talk's flame graph: ~70% of CPU).
    ``secrets`` (the API key, the write token) never appear in a line; events
    below ``level`` are not written.
    """

    def __init__(self, stream: BinaryIO, secrets: Iterable[str] = (), *, level: str) -> None:
        self._logger = json_lines_logger(stream, secrets, level)

    def debug(self, event: str, **fields: object) -> None:
        self._logger.debug(event, **fields)

    def info(self, event: str, **fields: object) -> None:
        self._logger.info(event, **fields)

    def warning(self, event: str, **fields: object) -> None:
        self._logger.warning(event, **fields)

    def error(self, event: str, **fields: object) -> None:
        self._logger.error(event, **fields)
