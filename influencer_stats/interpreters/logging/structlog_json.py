"""Every event rendered as one JSON line, synchronously (the talk's v1 logger)."""

from __future__ import annotations

import logging
from typing import Any, BinaryIO

import orjson
import structlog


def json_lines_logger(stream: BinaryIO) -> Any:
    """A structlog logger writing JSON lines to ``stream``, configured locally.

    No global ``structlog.configure``: two loggers in one process (tests) do
    not interfere.
    """
    return structlog.wrap_logger(
        structlog.BytesLogger(stream),
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.JSONRenderer(serializer=orjson.dumps),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG),
        cache_logger_on_first_use=True,
    )


class StructlogEventLog:
    """``EventLog`` that renders and writes every event, every level, right away.

    Each call serialises JSON and performs a write on the caller's task: cheap
    to reason about, expensive under load (the talk's flame graph: ~70% of CPU).
    """

    def __init__(self, stream: BinaryIO) -> None:
        self._logger = json_lines_logger(stream)

    def debug(self, event: str, **fields: object) -> None:
        self._logger.debug(event, **fields)

    def info(self, event: str, **fields: object) -> None:
        self._logger.info(event, **fields)

    def warning(self, event: str, **fields: object) -> None:
        self._logger.warning(event, **fields)

    def error(self, event: str, **fields: object) -> None:
        self._logger.error(event, **fields)
