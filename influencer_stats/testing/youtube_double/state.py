"""The double's mutable state: call counters and the fault switch.

One :class:`DoubleState` belongs to one double and one event loop; the
application records every videos.list call into it, and tests or the control
API read it and set faults (see :data:`FAULT_MODES`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Final, Literal, get_args

from influencer_stats.testing.youtube_double.wire import JsonObject

BATCH_HISTORY: Final = 100
"""How many recent calls' id lists :class:`DoubleState` keeps."""

MAX_STALL_SECONDS: Final = 600.0
"""Upper bound of ``stall_seconds`` (a stall never hangs a test run forever)."""

FaultMode = Literal[
    "none",
    "quota",
    "rate_limit",
    "bad_key",
    "server_error",
    "unavailable",
    "too_many",
    "stall",
    "malformed",
    "bad_count",
    "reset",
]
FAULT_MODES: Final[tuple[FaultMode, ...]] = get_args(FaultMode)


@dataclass(slots=True)
class FaultState:
    """The active fault: ``remaining`` is None for "until changed"."""

    mode: FaultMode = "none"
    remaining: int | None = None
    stall_seconds: float = 30.0
    bad_value: str = "-5"

    def to_json(self) -> JsonObject:
        """The JSON the control API reports."""
        return {
            "mode": self.mode,
            "remaining": self.remaining,
            "stall_seconds": self.stall_seconds,
            "bad_value": self.bad_value,
        }


@dataclass(slots=True)
class DoubleState:
    """Counters and the fault switch of one double (mutable, one event loop)."""

    default_stall_seconds: float = 30.0
    calls: int = 0
    ids_requested: int = 0
    max_ids_in_call: int = 0
    batches: deque[list[str]] = field(default_factory=lambda: deque(maxlen=BATCH_HISTORY))
    #: The ``traceparent`` header of each recent call (None: none sent), in arrival order.
    traceparents: deque[str | None] = field(default_factory=lambda: deque(maxlen=BATCH_HISTORY))
    key_header_seen: bool = False
    key_in_query_seen: bool = False
    fault: FaultState = field(default_factory=FaultState)

    def __post_init__(self) -> None:
        self.default_stall_seconds = _clamp_stall(self.default_stall_seconds)
        self.fault.stall_seconds = self.default_stall_seconds

    def reset(self) -> None:
        """Zero every counter and switch the fault off."""
        self.calls = 0
        self.ids_requested = 0
        self.max_ids_in_call = 0
        self.batches.clear()
        self.traceparents.clear()
        self.key_header_seen = False
        self.key_in_query_seen = False
        self.fault = FaultState(stall_seconds=self.default_stall_seconds)

    def set_fault(
        self,
        mode: FaultMode,
        count: int | None = None,
        *,
        stall_seconds: float | None = None,
        bad_value: str | None = None,
    ) -> FaultState:
        """Apply ``mode`` to the next ``count`` videos.list calls (None: until changed)."""
        if mode not in FAULT_MODES:
            raise ValueError(f"unknown fault mode {mode!r}; one of {', '.join(FAULT_MODES)}")
        if count is not None and count < 1:
            raise ValueError("count must be >= 1 (omit it for 'until changed')")
        self.fault = FaultState(
            mode=mode,
            remaining=None if mode == "none" else count,
            stall_seconds=(
                self.default_stall_seconds if stall_seconds is None else _clamp_stall(stall_seconds)
            ),
            bad_value="-5" if bad_value is None else bad_value,
        )
        return self.fault

    def take_fault(self) -> FaultState:
        """The fault for the call that just arrived; consumes one of ``count``."""
        current = self.fault
        if current.mode == "none" or current.remaining is None:
            return current
        current.remaining -= 1
        if current.remaining <= 0:
            self.fault = FaultState(stall_seconds=current.stall_seconds, bad_value=current.bad_value)
        return current

    def record(
        self, ids: list[str], *, key_header: bool, key_in_query: bool, traceparent: str | None = None
    ) -> None:
        """Count one videos.list call, the (non-empty) ids and the ``traceparent`` it carried."""
        self.calls += 1
        self.ids_requested += len(ids)
        self.max_ids_in_call = max(self.max_ids_in_call, len(ids))
        self.batches.append(ids)
        self.traceparents.append(traceparent)
        self.key_header_seen = self.key_header_seen or key_header
        self.key_in_query_seen = self.key_in_query_seen or key_in_query

    def snapshot(self) -> JsonObject:
        """The JSON of ``GET /_control/stats``."""
        return {
            "calls": self.calls,
            "ids_requested": self.ids_requested,
            "max_ids_in_call": self.max_ids_in_call,
            "batches": [list(b) for b in self.batches],
            "traceparents": list(self.traceparents),
            "key_header_seen": self.key_header_seen,
            "key_in_query_seen": self.key_in_query_seen,
            "fault": self.fault.to_json(),
        }


def _clamp_stall(seconds: float) -> float:
    return min(max(float(seconds), 0.0), MAX_STALL_SECONDS)
