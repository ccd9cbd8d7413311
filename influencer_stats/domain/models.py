"""Domain values: frozen, hashable, free of any infrastructure.

Everything the logic computes with, and every expected failure an algebra can
report, is defined here. Algebras and interpreters import these; this module
imports nothing of theirs.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, NamedTuple, NewType

CollectionId = NewType("CollectionId", str)
VideoId = NewType("VideoId", str)
#: A day, in seconds (UTC days: what a history keeps one point of, what a claim lasts).
DAY_S = 86_400.0

#: Which write of a collection is stored: an opaque token, new on every save, never repeated
#: (a delete and a re-creation included), so a conditional write can tell "still the one I read".
Revision = NewType("Revision", str)
#: The revision of a collection (or of a kept source) written before revisions existed.
NO_REVISION = Revision("")


def new_revision() -> Revision:
    """A fresh revision: 64 random bits, so none repeats (a per-id counter would after a delete)."""
    return Revision(secrets.token_hex(8))


@dataclass(frozen=True, slots=True)
class VideoStats:
    """Public counters of one video. Hidden or private counters are 0."""

    views: int = 0
    likes: int = 0
    comments: int = 0
    dislikes: int = 0


#: The statistics ``videos.list`` returned, by video (an id it did not return is not a key).
StatsByVideo = dict[VideoId, VideoStats]


class VideoEntry(NamedTuple):
    """What a per-video cache holds for one video: its counters (``None``: missing) and when it
    stored them, by its clock."""

    stats: VideoStats | None
    stored_at: float


@dataclass(frozen=True, slots=True)
class Collection:
    """A named list of video ids, in the order the user gave them, and the ``revision`` of the
    write that stored it (not compared: two collections with the same ids are equal)."""

    id: CollectionId
    videos: tuple[VideoId, ...]
    revision: Revision = field(default=NO_REVISION, compare=False)


#: What a collection can be read from: a playlist, or the uploads of a channel.
SourceKind = Literal["playlist", "channel"]


@dataclass(frozen=True, slots=True)
class CollectionSource:
    """Where a collection's videos come from: a YouTube playlist, or a channel's uploads.

    A collection read from one keeps it, so a refresh reads it again (new uploads join)."""

    kind: SourceKind
    id: str


@dataclass(frozen=True, slots=True)
class KeptSource:
    """A collection's source as ``CollectionSources`` keeps it: with the collection's ``revision``
    it was saved at. It is the collection's source only while that is still the collection's
    revision: any later write of the collection (a save of ids, a delete) leaves it behind."""

    source: CollectionSource
    revision: Revision


@dataclass(frozen=True, slots=True)
class VideoBatch:
    """What a video stats source found for the ids it was asked about.

    Every requested id is either a key of ``stats`` or listed in ``missing``.
    ``cache`` says how a cache served the oldest of them (``None``: all fetched now).
    """

    stats: Mapping[VideoId, VideoStats]
    missing: tuple[VideoId, ...] = ()
    cache: CacheInfo | None = None


@dataclass(frozen=True, slots=True)
class CollectionStats:
    """The aggregate the API returns for one collection."""

    impressions: int
    engagements: int
    score: int
    videos: int
    missing: tuple[VideoId, ...]


# --- Saving a collection -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Created:
    """The collection did not exist and now does, at ``revision``."""

    revision: Revision = field(default=NO_REVISION, compare=False)


@dataclass(frozen=True, slots=True)
class Replaced:
    """The collection existed and its videos were replaced; it is now at ``revision``."""

    revision: Revision = field(default=NO_REVISION, compare=False)


SaveOutcome = Created | Replaced


# --- Expected failures (closed unions of frozen values) ----------------------


@dataclass(frozen=True, slots=True)
class CollectionNotFound:
    """No collection has this id."""

    id: CollectionId


@dataclass(frozen=True, slots=True)
class RevisionChanged:
    """A conditional write found the collection written since the revision it was given."""

    id: CollectionId


@dataclass(frozen=True, slots=True)
class StoreUnavailable:
    """The collection storage could not answer (e.g. its server is down)."""

    detail: str


@dataclass(frozen=True, slots=True)
class QuotaExceeded:
    """The upstream refused for quota or rate reasons; retrying now is futile."""

    detail: str
    retry_after_s: int = 60


@dataclass(frozen=True, slots=True)
class QuotaExhausted:
    """This deployment's own daily budget of YouTube units is spent; it resets in ``retry_after_s``."""

    detail: str
    retry_after_s: int


@dataclass(frozen=True, slots=True)
class ShareSpent(QuotaExhausted):
    """The client asking has spent its share of YouTube units for now (``shares``): a 429 with
    ``Retry-After``. A ``QuotaExhausted``, so caches serve what they hold and the breaker counts
    none; other clients' calls go on."""


@dataclass(frozen=True, slots=True)
class UpstreamMisconfigured:
    """The upstream rejected our request itself (bad key, bad request)."""

    detail: str


@dataclass(frozen=True, slots=True)
class UpstreamUnavailable:
    """The upstream failed transiently (5xx, 429, connection error, breaker open)."""

    detail: str


@dataclass(frozen=True, slots=True)
class UpstreamTimeout:
    """The upstream did not answer within the per-call timeout or the deadline."""

    detail: str


@dataclass(frozen=True, slots=True)
class InvalidUpstreamData:
    """The upstream answered with a body we cannot trust."""

    detail: str


@dataclass(frozen=True, slots=True)
class UpstreamBusy:
    """This process has as many YouTube calls waiting for a connection as it may; none was made."""

    detail: str


@dataclass(frozen=True, slots=True)
class SharedStateUnavailable:
    """State this service keeps for every worker (the quota count in Redis) did not answer; no call was made."""

    detail: str


@dataclass(frozen=True, slots=True)
class SourceNotFound:
    """YouTube has no such playlist or channel, or does not let this key read it."""

    source: CollectionSource
    detail: str


@dataclass(frozen=True, slots=True)
class SourceTooLarge:
    """The playlist or channel holds more videos (``videos``, as YouTube counts them) than a
    collection may (``limit``); nothing was saved."""

    source: CollectionSource
    videos: int
    limit: int


@dataclass(frozen=True, slots=True)
class NotFromASource:
    """The collection was saved as a list of ids, not read from a playlist or channel: nothing
    to refresh it from."""

    id: CollectionId


@dataclass(frozen=True, slots=True)
class RefreshTooSoon:
    """The collection's source was read less than the refresh interval ago; nothing was read.
    ``retry_after_s``: when a refresh may read it again."""

    id: CollectionId
    retry_after_s: int


UpstreamError = (
    QuotaExceeded
    | QuotaExhausted
    | UpstreamMisconfigured
    | UpstreamUnavailable
    | UpstreamTimeout
    | InvalidUpstreamData
    | UpstreamBusy
    | SharedStateUnavailable
)
#: Failures of this service's own limits or state, not of YouTube: no call was made, so
#: nothing about YouTube's health follows from them (the circuit breaker counts none).
NOT_YOUTUBES_FAULT = (QuotaExhausted, UpstreamBusy, SharedStateUnavailable)
StoreError = StoreUnavailable
StatsError = CollectionNotFound | StoreUnavailable | UpstreamError
#: Why a playlist's or channel's videos could not be read.
ReadError = SourceNotFound | SourceTooLarge | UpstreamError
#: Why a collection could not be saved from, or refreshed from, its playlist or channel.
ImportFailure = ReadError | CollectionNotFound | NotFromASource | RefreshTooSoon | StoreUnavailable


# --- Answers about statistics -------------------------------------------------
# NamedTuples rather than frozen dataclasses: equally immutable, and several
# times cheaper to create, which matters for values made on every request.


class CacheInfo(NamedTuple):
    """How a cached answer was served (rendered as RFC 9211 ``Cache-Status``).

    ``ttl_s`` is the freshness left; negative once stale. ``stale_reason`` is
    ``"revalidating"`` (served while one refresh runs), ``"stale-if-error"``
    (the upstream failed; the last good value is served instead) or
    ``"quota-exhausted"`` (the day's budget is spent; whatever is held is served).
    """

    hit: bool
    age_s: float
    ttl_s: float
    stale_reason: str | None = None


class StatsAnswer(NamedTuple):
    """Statistics of a collection plus, when a cache served them, how."""

    stats: CollectionStats
    cache: CacheInfo | None = None
