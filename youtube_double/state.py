"""The double's mutable state: call counters, the fault switch, and the playlists and channels.

One :class:`DoubleState` belongs to one double and one event loop; the
application records every call into it (videos.list, playlistItems.list and
channels.list each have their counters), and tests or the control API read
it, set faults (see :data:`FAULT_MODES`) and define playlists and channels.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, get_args

from youtube_double.playlists import (
    MAX_CHANNELS,
    PlaylistEntry,
    check_playlist_id,
    check_room,
    playlist_entries,
    uploads_playlist_id,
)
from youtube_double.wire import JsonObject

BATCH_HISTORY: Final = 100
"""How many recent calls' id lists (playlist asks, channel ids) :class:`DoubleState` keeps."""

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
    "loop_token",
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
    """Counters, the fault switch and the listings of one double (mutable, one event loop).

    ``calls``, ``ids_requested``, ``batches`` and ``traceparents`` are about
    videos.list only; playlistItems.list and channels.list have their own
    ``*_calls`` and ``*_asked``. The key flags and the fault switch are shared
    by the three endpoints (a fault is consumed by whichever call comes next).
    """

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
    #: Playlist id -> its entries, in order (see :meth:`set_playlist`).
    playlists: dict[str, tuple[PlaylistEntry, ...]] = field(default_factory=dict)
    #: Channel id -> the id of its uploads playlist (see :meth:`set_channel`).
    channels: dict[str, str] = field(default_factory=dict)
    playlist_items_calls: int = 0
    #: ``(playlistId, pageToken)`` of each recent playlistItems.list call (None: absent).
    playlist_items_asked: deque[tuple[str | None, str | None]] = field(
        default_factory=lambda: deque(maxlen=BATCH_HISTORY)
    )
    channels_calls: int = 0
    #: The channel ids of each recent channels.list call.
    channels_asked: deque[list[str]] = field(default_factory=lambda: deque(maxlen=BATCH_HISTORY))

    def __post_init__(self) -> None:
        self.default_stall_seconds = _clamp_stall(self.default_stall_seconds)
        self.fault.stall_seconds = self.default_stall_seconds

    def reset(self) -> None:
        """Zero every counter, switch the fault off and forget every playlist and channel."""
        self.calls = 0
        self.ids_requested = 0
        self.max_ids_in_call = 0
        self.batches.clear()
        self.traceparents.clear()
        self.key_header_seen = False
        self.key_in_query_seen = False
        self.fault = FaultState(stall_seconds=self.default_stall_seconds)
        self.playlists.clear()
        self.channels.clear()
        self.playlist_items_calls = 0
        self.playlist_items_asked.clear()
        self.channels_calls = 0
        self.channels_asked.clear()

    def set_playlist(
        self,
        playlist_id: str,
        videos: Sequence[str],
        *,
        private: Iterable[str] = (),
        deleted: Iterable[str] = (),
        unlisted: Iterable[str] = (),
    ) -> tuple[PlaylistEntry, ...]:
        """Define (or replace) playlist ``playlist_id``: ``videos`` in order, some of them marked.

        A marked id is listed where it stands in ``videos``: ``private`` ones as
        ``private`` without ``videoPublishedAt``, ``deleted`` ones as
        ``privacyStatusUnspecified`` without it. ValueError for a malformed
        definition or one beyond the bounds of :mod:`.playlists`.
        """
        entries = playlist_entries(videos, private=private, deleted=deleted, unlisted=unlisted)
        self._hold(check_playlist_id(playlist_id), entries)
        return entries

    def set_channel(self, channel_id: str, uploads: Sequence[str]) -> str:
        """Define (or replace) channel ``channel_id`` with ``uploads``; returns its ``UU...`` playlist id.

        The uploads playlist is an ordinary playlist: :meth:`set_playlist` on
        its id afterwards can mark some uploads private or deleted.
        """
        uploads_id = uploads_playlist_id(channel_id)
        if channel_id not in self.channels and len(self.channels) >= MAX_CHANNELS:
            raise ValueError(f"the double holds at most {MAX_CHANNELS} channels")
        self._hold(uploads_id, playlist_entries(uploads))
        self.channels[channel_id] = uploads_id
        return uploads_id

    def _hold(self, playlist_id: str, entries: tuple[PlaylistEntry, ...]) -> None:
        check_room(self.playlists, playlist_id, entries)
        self.playlists[playlist_id] = entries

    def set_fault(
        self,
        mode: FaultMode,
        count: int | None = None,
        *,
        stall_seconds: float | None = None,
        bad_value: str | None = None,
    ) -> FaultState:
        """Apply ``mode`` to the next ``count`` calls of any endpoint (None: until changed)."""
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

    def note_key(self, *, header: bool, in_query: bool) -> None:
        """Note how a call of any endpoint carried a key (``key`` in the query is a leak)."""
        self.key_header_seen = self.key_header_seen or header
        self.key_in_query_seen = self.key_in_query_seen or in_query

    def record(
        self,
        ids: list[str],
        *,
        key_header: bool = False,
        key_in_query: bool = False,
        traceparent: str | None = None,
    ) -> None:
        """Count one videos.list call, the (non-empty) ids and the ``traceparent`` it carried."""
        self.calls += 1
        self.ids_requested += len(ids)
        self.max_ids_in_call = max(self.max_ids_in_call, len(ids))
        self.batches.append(ids)
        self.traceparents.append(traceparent)
        self.note_key(header=key_header, in_query=key_in_query)

    def record_playlist_items(self, playlist_id: str | None, page_token: str | None) -> None:
        """Count one playlistItems.list call and what it asked for."""
        self.playlist_items_calls += 1
        self.playlist_items_asked.append((playlist_id, page_token))

    def record_channels(self, ids: list[str]) -> None:
        """Count one channels.list call and the channel ids it asked for."""
        self.channels_calls += 1
        self.channels_asked.append(ids)

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
            "playlist_items_calls": self.playlist_items_calls,
            "playlist_items_asked": [
                {"playlistId": playlist_id, "pageToken": token}
                for playlist_id, token in self.playlist_items_asked
            ],
            "channels_calls": self.channels_calls,
            "channels_asked": [list(ids) for ids in self.channels_asked],
            "playlists_held": len(self.playlists),
            "channels_held": len(self.channels),
        }


def _clamp_stall(seconds: float) -> float:
    return min(max(float(seconds), 0.0), MAX_STALL_SECONDS)
