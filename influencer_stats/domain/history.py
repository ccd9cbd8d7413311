"""A collection's stats at one moment, as the stats history (slice ``history``) keeps them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class StatsPoint:
    """A collection's stats at one moment (``at``: Unix seconds), as a history keeps them.

    ``missing`` counts the ids YouTube did not return. A ``gap`` is a moment a
    snapshot was due but not taken (the quota budget was short, the upstream
    failed): its figures are 0 and mean nothing; it is never invented data.
    """

    at: float
    impressions: int
    engagements: int
    score: int
    videos: int
    missing: int
    gap: bool = False
