"""The three list methods the double serves, each told by what sets it apart.

:func:`~youtube_double.app.create_app` serves every
endpoint through one path (count the call, take the fault, latency, key,
``part``); an :class:`Endpoint` says the rest: what to record, how to answer
the query (an error or the success body), and which field of the first item
the ``bad_count`` fault spoils.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from aiohttp import web
from multidict import MultiMapping

from youtube_double.errors import (
    invalid_max_results_body,
    invalid_page_token_body,
    missing_channel_id_body,
    missing_id_body,
    missing_playlist_id_body,
    part_without_statistics_body,
    playlist_not_found_body,
    too_many_ids_body,
)
from youtube_double.listings import (
    CHANNELS_PATH,
    DEFAULT_MAX_RESULTS,
    MAX_RESULTS,
    PLAYLIST_ITEMS_PATH,
    channel_list_response,
    page_offset,
    playlist_items_response,
)
from youtube_double.state import DoubleState
from youtube_double.wire import (
    MAX_IDS_PER_CALL,
    VIDEOS_PATH,
    JsonObject,
    videos_list_response,
)

Query = MultiMapping[str]
Answer = tuple[int, JsonObject]
"""An HTTP status and its JSON body: 200 and the success body, or a Google error."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """What one list method does beyond the path all of them share."""

    path: str
    #: Count the call in the state (before anything can fail).
    record: Callable[[DoubleState, web.Request], None]
    #: The answer to a request that passed the shared checks, given its ``part`` list.
    answer: Callable[[DoubleState, Query, list[str]], Answer]
    #: Where, in the first item, ``bad_count`` writes its value.
    bad_field: tuple[str, ...]
    #: Whether it answers in pages (``pageToken``): what ``loop_token`` loops.
    pages: bool = False


def spoil_first_item(body: JsonObject, field: tuple[str, ...], value: str) -> None:
    """Write ``value`` at ``field`` of the first item, if there is one that has the field's parent."""
    items = body.get("items")
    if not items:
        return
    target = items[0]
    for key in field[:-1]:
        target = target.get(key)
        if not isinstance(target, dict):
            return
    target[field[-1]] = value


def _ids(query: Query) -> list[str]:
    """The non-empty pieces of every (comma-separated) ``id`` parameter."""
    return [piece for raw in query.getall("id", []) for piece in raw.split(",") if piece]


def _id_filter(query: Query, missing: Callable[[], JsonObject]) -> list[str] | Answer:
    """The ``id`` filter's ids, or the 400 for none given (``missing``) or too many."""
    if "id" not in query:
        return 400, missing()
    ids = _ids(query)
    if len(ids) > MAX_IDS_PER_CALL:
        return 400, too_many_ids_body(len(ids))
    return ids


def _answer_videos(state: DoubleState, query: Query, parts: list[str]) -> Answer:
    if "statistics" not in parts:
        return 400, part_without_statistics_body(query.get("part", ""))
    ids = _id_filter(query, missing_id_body)
    if isinstance(ids, tuple):
        return ids
    return 200, videos_list_response(ids)


def _max_results(raw: str | None) -> int | None:
    """``maxResults`` (absent: the default), or None when it is not a whole number in range."""
    if raw is None:
        return DEFAULT_MAX_RESULTS
    if not (raw.isascii() and raw.isdigit()) or int(raw) > MAX_RESULTS:
        return None
    return int(raw)


def _answer_playlist_items(state: DoubleState, query: Query, parts: list[str]) -> Answer:
    playlist_id = query.get("playlistId")
    if not playlist_id:
        return 400, missing_playlist_id_body()
    raw_max = query.get("maxResults")
    max_results = _max_results(raw_max)
    if max_results is None:
        return 400, invalid_max_results_body(raw_max or "")
    token = query.get("pageToken")
    offset = page_offset(token) if token else 0
    if offset is None:
        return 400, invalid_page_token_body()
    entries = state.playlists.get(playlist_id)
    if entries is None:
        return 404, playlist_not_found_body()
    return 200, playlist_items_response(playlist_id, entries, offset, max_results, parts)


def _answer_channels(state: DoubleState, query: Query, parts: list[str]) -> Answer:
    ids = _id_filter(query, missing_channel_id_body)
    if isinstance(ids, tuple):
        return ids
    return 200, channel_list_response(state.channels, ids, parts)


VIDEOS: Final = Endpoint(
    path=VIDEOS_PATH,
    record=lambda state, request: state.record(
        _ids(request.query), traceparent=request.headers.get("traceparent")
    ),
    answer=_answer_videos,
    bad_field=("statistics", "viewCount"),
)
PLAYLIST_ITEMS: Final = Endpoint(
    path=PLAYLIST_ITEMS_PATH,
    record=lambda state, request: state.record_playlist_items(
        request.query.get("playlistId"), request.query.get("pageToken")
    ),
    answer=_answer_playlist_items,
    bad_field=("contentDetails", "videoId"),
    pages=True,
)
CHANNELS: Final = Endpoint(
    path=CHANNELS_PATH,
    record=lambda state, request: state.record_channels(_ids(request.query)),
    answer=_answer_channels,
    bad_field=("contentDetails", "relatedPlaylists", "uploads"),
)
ENDPOINTS: Final = (VIDEOS, PLAYLIST_ITEMS, CHANNELS)
"""Every Data API method the double serves."""
