"""The playlists and channels the double holds: their entries, the rules and the bounds.

A playlist is an ordered tuple of :class:`PlaylistEntry` (a video id and its
privacy; a video may appear more than once, as upstream). A channel is known
by the id of its uploads playlist, ``UU`` + the channel id after ``UC``, which
is how YouTube derives it. Definitions are validated here, so the Python API
and the control API reject the same things with the same messages
(``ValueError``), and bounded, so a script cannot make the double hold
unbounded memory.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, get_args

Privacy = Literal["public", "unlisted", "private", "deleted"]
"""How an entry is listed: ``deleted`` is ``privacyStatusUnspecified`` on the wire."""

PRIVACIES: Final[tuple[Privacy, ...]] = get_args(Privacy)

MAX_PLAYLIST_VIDEOS: Final = 100_000
"""Entries one playlist may hold (YouTube's own cap on a playlist is 5,000; uploads have none)."""

MAX_PLAYLISTS: Final = 1_000
"""Playlists the double may hold, channels' uploads playlists included."""

MAX_CHANNELS: Final = 1_000
"""Channels the double may hold."""

MAX_HELD_ENTRIES: Final = 1_000_000
"""Entries of all playlists together: the bound that actually caps the memory held."""

_VIDEO_ID: Final = re.compile(r"[A-Za-z0-9_-]{11}")
_LIST_ID: Final = re.compile(r"[A-Za-z0-9_-]{2,64}")
_CHANNEL_ID: Final = re.compile(r"UC[A-Za-z0-9_-]{1,62}")


@dataclass(frozen=True, slots=True)
class PlaylistEntry:
    """One position of a playlist: the video there and how it is listed."""

    video_id: str
    privacy: Privacy = "public"


def check_playlist_id(playlist_id: object) -> str:
    """``playlist_id`` if it looks like one (2-64 of ``A-Za-z0-9_-``), else ValueError."""
    if not isinstance(playlist_id, str) or not _LIST_ID.fullmatch(playlist_id):
        raise ValueError(f"a playlist id is 2 to 64 characters of A-Za-z0-9_- (got {playlist_id!r})")
    return playlist_id


def check_channel_id(channel_id: object) -> str:
    """``channel_id`` if it looks like one (``UC`` then 1-62 of ``A-Za-z0-9_-``), else ValueError."""
    if not isinstance(channel_id, str) or not _CHANNEL_ID.fullmatch(channel_id):
        raise ValueError(f"a channel id is 'UC' then 1 to 62 characters of A-Za-z0-9_- (got {channel_id!r})")
    return channel_id


def uploads_playlist_id(channel_id: str) -> str:
    """The id of a channel's uploads playlist: ``UC...`` becomes ``UU...``, as upstream."""
    return "UU" + check_channel_id(channel_id)[2:]


def playlist_entries(
    videos: Sequence[object],
    *,
    private: Iterable[object] = (),
    deleted: Iterable[object] = (),
    unlisted: Iterable[object] = (),
) -> tuple[PlaylistEntry, ...]:
    """The entries of a playlist holding ``videos`` in that order, some of them marked.

    Every id is 11 characters of ``A-Za-z0-9_-``; a marked id must be one of
    ``videos`` (all its occurrences take the mark) and carry one mark only.
    Entries of one id share one object, so a long playlist of repeats is small.
    The arguments are typed loosely because the control API passes parsed JSON.
    """
    if isinstance(videos, str):
        raise ValueError("videos must be a list of video ids, not a string")
    if len(videos) > MAX_PLAYLIST_VIDEOS:
        raise ValueError(f"a playlist holds at most {MAX_PLAYLIST_VIDEOS} videos (got {len(videos)})")
    ids: list[str] = []
    for vid in videos:
        if not isinstance(vid, str) or not _VIDEO_ID.fullmatch(vid):
            raise ValueError(f"a video id is 11 characters of A-Za-z0-9_- (got {vid!r})")
        ids.append(vid)
    present = set(ids)
    marks: dict[str, Privacy] = {}
    marked: tuple[tuple[Privacy, Iterable[object]], ...] = (
        ("private", private),
        ("deleted", deleted),
        ("unlisted", unlisted),
    )
    for privacy, marked_ids in marked:
        if isinstance(marked_ids, str):
            raise ValueError(f"{privacy} must be a list of video ids, not a string")
        for vid in marked_ids:
            if not isinstance(vid, str) or vid not in present:
                raise ValueError(f"{privacy} id {vid!r} is not one of the playlist's videos")
            if marks.setdefault(vid, privacy) != privacy:
                raise ValueError(f"video {vid!r} is marked both {marks[vid]} and {privacy}")
    shared = {vid: PlaylistEntry(vid, marks.get(vid, "public")) for vid in present}
    return tuple(shared[vid] for vid in ids)


def check_room(
    held: Mapping[str, Sequence[PlaylistEntry]], playlist_id: str, entries: Sequence[PlaylistEntry]
) -> None:
    """ValueError unless ``held`` may take ``playlist_id`` (new or replaced) with ``entries``.

    The bounds are :data:`MAX_PLAYLISTS` playlists and :data:`MAX_HELD_ENTRIES`
    entries in all (a replaced playlist's old entries do not count).
    """
    if playlist_id not in held and len(held) >= MAX_PLAYLISTS:
        raise ValueError(f"the double holds at most {MAX_PLAYLISTS} playlists")
    others = sum(len(kept) for pid, kept in held.items() if pid != playlist_id)
    if others + len(entries) > MAX_HELD_ENTRIES:
        raise ValueError(f"the double holds at most {MAX_HELD_ENTRIES} playlist entries in all")
