"""The playlistItems.list and channels.list wire format: paths, page tokens and success bodies.

Shaped as the real API answers ``part=contentDetails,status`` (playlistItems)
and ``part=contentDetails`` (channels); only the parts asked for are present.
Every value is deterministic (etags, item ids and publication times are
derived from the ids), so a test can compare whole bodies.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from hashlib import blake2b
from typing import Final

from youtube_double.playlists import MAX_PLAYLIST_VIDEOS, PlaylistEntry
from youtube_double.wire import JsonObject, etag, requested_ids

PLAYLIST_ITEMS_PATH: Final = "/youtube/v3/playlistItems"
"""Path of playlistItems.list, as on www.googleapis.com."""

CHANNELS_PATH: Final = "/youtube/v3/channels"
"""Path of channels.list, as on www.googleapis.com."""

DEFAULT_MAX_RESULTS: Final = 5
MAX_RESULTS: Final = 50
"""``maxResults`` of playlistItems.list is 0..50, 5 when absent (as documented upstream)."""

CHANNELS_PER_PAGE: Final = 5
"""channels.list's ``pageInfo.resultsPerPage`` (its default ``maxResults``)."""

_PRIVACY_ON_WIRE: Final = {
    "public": "public",
    "unlisted": "unlisted",
    "private": "private",
    "deleted": "privacyStatusUnspecified",
}
_EPOCH: Final = datetime(2015, 1, 1, tzinfo=UTC)
_PUBLISHED_SPAN_S: Final = 10 * 365 * 86_400


def page_token(offset: int) -> str:
    """The opaque token of the page starting at entry ``offset``."""
    return base64.urlsafe_b64encode(f"PT:{offset}".encode()).decode().rstrip("=")


def page_offset(token: str) -> int | None:
    """The offset ``token`` stands for, or None if :func:`page_token` did not make it."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    prefix, _, digits = raw.partition(":")
    if prefix != "PT" or not digits.isdigit() or len(digits) > 6:
        return None
    offset = int(digits)
    if offset > MAX_PLAYLIST_VIDEOS or page_token(offset) != token:
        return None
    return offset


def video_published_at(video_id: str) -> str:
    """When the synthetic world says ``video_id`` was published (2015-2024, whole seconds)."""
    digest = blake2b(video_id.encode(), digest_size=8, person=b"published").digest()
    moment = _EPOCH + timedelta(seconds=int.from_bytes(digest, "big") % _PUBLISHED_SPAN_S)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _playlist_item(playlist_id: str, position: int, entry: PlaylistEntry, parts: Sequence[str]) -> JsonObject:
    key = blake2b(f"{playlist_id}\x00{position}\x00{entry.video_id}".encode(), digest_size=8).hexdigest()
    item: JsonObject = {
        "kind": "youtube#playlistItem",
        "etag": etag("playlistItem", playlist_id, str(position), entry.video_id, entry.privacy),
        "id": base64.b64encode(f"{playlist_id}.{key.upper()}".encode()).decode(),
    }
    if "contentDetails" in parts:
        details: JsonObject = {"videoId": entry.video_id}
        if entry.privacy in ("public", "unlisted"):
            details["videoPublishedAt"] = video_published_at(entry.video_id)
        item["contentDetails"] = details
    if "status" in parts:
        item["status"] = {"privacyStatus": _PRIVACY_ON_WIRE[entry.privacy]}
    return item


def playlist_items_response(
    playlist_id: str,
    entries: Sequence[PlaylistEntry],
    offset: int,
    max_results: int,
    parts: Sequence[str],
) -> JsonObject:
    """The page of ``entries`` from ``offset``, at most ``max_results`` of them.

    ``nextPageToken`` is present unless this page reaches the end (or is empty
    because ``max_results`` is 0 or ``offset`` is past the end); ``prevPageToken``
    unless it is the first page, as upstream. ``totalResults`` counts every
    entry, private and deleted ones included.
    """
    end = min(offset + max_results, len(entries))
    items = [_playlist_item(playlist_id, i, entries[i], parts) for i in range(offset, end)]
    body: JsonObject = {
        "kind": "youtube#playlistItemListResponse",
        "etag": etag("playlistItems", playlist_id, str(offset), *(str(item["etag"]) for item in items)),
    }
    if items and end < len(entries):
        body["nextPageToken"] = page_token(end)
    if offset > 0:
        body["prevPageToken"] = page_token(max(offset - max_results, 0))
    body["pageInfo"] = {"totalResults": len(entries), "resultsPerPage": max_results}
    body["items"] = items
    return body


def channel_list_response(
    channels: Mapping[str, str], ids: Sequence[str], parts: Sequence[str]
) -> JsonObject:
    """The channels among ``ids`` the double knows, in the order asked, each once.

    ``channels`` maps a channel id to its uploads playlist id. With none of
    them known the body has no ``items`` key at all, as upstream.
    """
    items: list[JsonObject] = []
    for channel_id in requested_ids(ids):
        uploads = channels.get(channel_id)
        if uploads is None:
            continue
        item: JsonObject = {
            "kind": "youtube#channel",
            "etag": etag("channel", channel_id, uploads),
            "id": channel_id,
        }
        if "contentDetails" in parts:
            item["contentDetails"] = {"relatedPlaylists": {"likes": "", "uploads": uploads}}
        items.append(item)
    body: JsonObject = {
        "kind": "youtube#channelListResponse",
        "etag": etag("channels", *(str(item["etag"]) for item in items)),
        "pageInfo": {"totalResults": len(items), "resultsPerPage": CHANNELS_PER_PAGE},
    }
    if items:
        body["items"] = items
    return body
