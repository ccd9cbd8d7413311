"""What a per-video cache is built of: where its entries live, where stale videos wait for a call,
and who calls for a video several workers miss at once (this process, or Redis for every worker)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from influencer_stats.domain.models import VideoEntry, VideoId


class VideoEntries(Protocol):
    """Where a video cache keeps its entries (this process, or Redis for every worker).

    Contract: ``get_many`` returns the entries it holds for some of ``ids`` (a
    backend that fails returns none: the caller fetches); ``put_many`` stores
    or drops silently. Neither raises for its backend failing.
    """

    async def get_many(self, ids: Sequence[VideoId]) -> Mapping[VideoId, VideoEntry]: ...

    async def put_many(self, entries: Mapping[VideoId, VideoEntry]) -> None: ...


class StaleQueue(Protocol):
    """Stale videos waiting to be refreshed, oldest first, at most a call's worth (``room``).

    Contract: ``push`` queues the ids not queued yet and, once ``room`` wait,
    takes them out and returns them (the caller makes that call); ``take``
    takes up to ``room`` of the oldest (a call that has room); ``take_due``
    takes up to ``room`` if the oldest was queued at or before ``cutoff`` (a
    wait ended), and says whether any are left. A backend may drop ids it
    knows were refreshed meanwhile. None raises for its backend failing:
    ``push`` then returns what it was given (refresh them now), the others
    take nothing.
    """

    async def push(self, ids: Sequence[VideoId], now: float, fresh_s: float) -> list[VideoId]: ...

    async def take(self, room: int, now: float, fresh_s: float) -> list[VideoId]: ...

    async def take_due(self, cutoff: float, now: float, fresh_s: float) -> tuple[list[VideoId], bool]: ...


class MissClaims(Protocol):
    """Claims on the videos a worker is calling for because it lacks them.

    Contract: ``claim`` claims for this worker every id nobody holds and returns
    the ids another worker holds or stored fresh meanwhile (by ``now`` and
    ``fresh_s``: a video another worker's call brought after this worker read
    its entry is not called for again); a claim lapses after its hold time even if
    never released (a worker that dies holds nothing for long); ``release``
    gives up this worker's claims on ``ids`` (never another's); ``settled``
    returns, of ``ids``, those nobody claims any more, each with its entry
    (``None``: none stored, so the claimer's call failed). None raises for its
    backend failing: ``claim`` then returns no ids (this worker calls for all
    of them), ``release`` leaves the claims to lapse, ``settled`` returns none.
    """

    async def claim(self, ids: Sequence[VideoId], now: float, fresh_s: float) -> list[VideoId]: ...

    async def release(self, ids: Sequence[VideoId]) -> None: ...

    async def settled(self, ids: Sequence[VideoId]) -> Mapping[VideoId, VideoEntry | None]: ...
