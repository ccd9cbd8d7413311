"""Fields bound to every log line of the current request (e.g. its request id).

The HTTP edge sets them; every ``EventLog`` interpreter adds them to the
events logged while they are set (the dropping logger captures them at call
time, since it writes later, from another task).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar

LOG_CONTEXT: ContextVar[Mapping[str, object]] = ContextVar("log_context", default={})  # noqa: B039 - never mutated
