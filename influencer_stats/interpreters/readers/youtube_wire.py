"""The wire format of ``playlistItems.list`` and ``channels.list``: URLs, answers, errors.

What the YouTube reader needs to speak them without knowing which HTTP
library sends the GET. Counted in quota units like ``videos.list``: one per
call (a page of at most 50 items, or one channel).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

import msgspec
from returns.result import Failure, Result, Success

from influencer_stats.domain.models import (
    CollectionSource,
    InvalidUpstreamData,
    SourceNotFound,
    UpstreamError,
    VideoId,
)
from influencer_stats.interpreters.youtube.youtube_api import classify_error

#: Items per ``playlistItems.list`` page, Google's maximum.
PAGE_SIZE = 50
#: A page token is opaque; YouTube's are a dozen characters. Longer is not a page token.
MAX_PAGE_TOKEN = 200
_VIDEO_ID = re.compile(r"[A-Za-z0-9_-]{11}")
#: What a viewer can watch; "private" and a deleted video's "privacyStatusUnspecified" are left out.
_WATCHABLE = frozenset({"public", "unlisted"})
#: The reasons of a 403 or 404 that say the list itself cannot be read (it never will be).
_NOT_FOUND = frozenset({"playlistNotFound", "playlistItemsNotAccessible", "channelNotFound", "forbidden"})


def playlist_url(api_root: str, playlist_id: str, page_token: str | None) -> str:
    """One page (50 items) of a playlist, with each item's privacy, never the key."""
    url = f"{api_root}/playlistItems?part=contentDetails,status&maxResults={PAGE_SIZE}&playlistId={quote(playlist_id, safe='')}"
    return url if page_token is None else f"{url}&pageToken={quote(page_token, safe='')}"


def channel_url(api_root: str, channel_id: str) -> str:
    """A channel's related playlists (its uploads among them)."""
    return f"{api_root}/channels?part=contentDetails&id={quote(channel_id, safe='')}"


class _Details(msgspec.Struct, rename="camel"):
    video_id: str = ""
    video_published_at: str | None = None


class _Status(msgspec.Struct, rename="camel"):
    privacy_status: str = ""


class _Item(msgspec.Struct, rename="camel"):
    content_details: _Details = msgspec.field(default_factory=_Details)
    status: _Status | None = None


class _PageInfo(msgspec.Struct, rename="camel"):
    total_results: int = 0


class _Page(msgspec.Struct, rename="camel"):
    items: list[_Item] = msgspec.field(default_factory=list)
    next_page_token: str | None = None
    page_info: _PageInfo = msgspec.field(default_factory=_PageInfo)


class _Related(msgspec.Struct, rename="camel"):
    uploads: str = ""


class _ChannelDetails(msgspec.Struct, rename="camel"):
    related_playlists: _Related = msgspec.field(default_factory=_Related)


class _Channel(msgspec.Struct, rename="camel"):
    content_details: _ChannelDetails = msgspec.field(default_factory=_ChannelDetails)


class _Channels(msgspec.Struct, rename="camel"):
    items: list[_Channel] = msgspec.field(default_factory=list)


class _Reason(msgspec.Struct, rename="camel"):
    reason: str = ""


class _ErrorBody(msgspec.Struct, rename="camel"):
    errors: list[_Reason] = msgspec.field(default_factory=list)


class _Error(msgspec.Struct, rename="camel"):
    error: _ErrorBody


_decode_page = msgspec.json.Decoder(_Page).decode
_decode_channels = msgspec.json.Decoder(_Channels).decode
_decode_error = msgspec.json.Decoder(_Error).decode


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a playlist: the watchable videos on it, how many items it held in all, where
    the next page starts (``None``: the last), and how many items YouTube says the list has."""

    videos: tuple[VideoId, ...]
    items: int
    next_token: str | None
    total: int


def failure(source: CollectionSource, status: int, body: bytes | None) -> ReadFailure:
    """What a non-200 answer (or an oversized body: ``None``) means for reading ``source``."""
    if body is None:
        return InvalidUpstreamData(f"a {source.kind} answer was longer than the client reads")
    if status in (403, 404):
        try:
            reasons = [r.reason for r in _decode_error(body).error.errors]
        except msgspec.DecodeError:
            reasons = []
        if reasons and reasons[0] in _NOT_FOUND:
            return SourceNotFound(source, f"YouTube answered {status} {reasons[0]}")
    return classify_error(status, body)


ReadFailure = SourceNotFound | UpstreamError


def parse_page(body: bytes) -> Result[Page, UpstreamError]:
    """A 200 answer of ``playlistItems.list``; a body we cannot trust is invalid data (never a
    partial list): an item without a well-formed video id, a page token of no sane length."""
    try:
        page = _decode_page(body)
    except msgspec.DecodeError as exc:
        return Failure(InvalidUpstreamData(f"playlistItems.list body does not parse: {str(exc)[:200]}"))
    token = page.next_page_token
    if token is not None and not 0 < len(token) <= MAX_PAGE_TOKEN:
        return Failure(InvalidUpstreamData("playlistItems.list sent a page token of no sane length"))
    videos: list[VideoId] = []
    for item in page.items:
        details = item.content_details
        if item.status is not None:
            watchable = item.status.privacy_status in _WATCHABLE
        else:  # without the status part: a private or deleted video has no publishing time
            watchable = details.video_published_at is not None
        if not watchable:
            continue
        if not _VIDEO_ID.fullmatch(details.video_id):
            return Failure(InvalidUpstreamData("playlistItems.list sent an item without a video id"))
        videos.append(VideoId(details.video_id))
    return Success(Page(tuple(videos), len(page.items), token, max(page.page_info.total_results, 0)))


def parse_uploads(source: CollectionSource, body: bytes) -> Result[str, ReadFailure]:
    """The uploads playlist's id from a 200 answer of ``channels.list``; no such channel (no
    items, as YouTube answers for an unknown id) is ``SourceNotFound``."""
    try:
        channels = _decode_channels(body).items
    except msgspec.DecodeError as exc:
        return Failure(InvalidUpstreamData(f"channels.list body does not parse: {str(exc)[:200]}"))
    if not channels:
        return Failure(SourceNotFound(source, "YouTube has no channel with this id"))
    uploads = channels[0].content_details.related_playlists.uploads
    if not uploads:
        return Failure(SourceNotFound(source, "the channel lists no uploads"))
    if not 0 < len(uploads) <= 64:
        return Failure(InvalidUpstreamData("channels.list sent an uploads playlist id of no sane length"))
    return Success(uploads)
