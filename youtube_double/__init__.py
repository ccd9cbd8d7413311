"""A YouTube Data API double on aiohttp.web: videos.list, playlistItems.list and channels.list.

Serves ``GET /youtube/v3/videos`` (the base URL a client is configured with is
``http://HOST:PORT/youtube/v3/videos``) with the statistics of
:func:`influencer_stats.interpreters.videos.synthetic.synthetic_stats`, and ``GET /healthz``
(``200 ok``). Ids for which :func:`~influencer_stats.interpreters.videos.synthetic.is_unknown`
holds (they start with ``X``) are silently absent from ``items``, as deleted or
private videos are upstream.

It also serves, from the playlists and channels defined on it (control API or
:meth:`DoubleState.set_playlist` / :meth:`DoubleState.set_channel`):

* ``GET /youtube/v3/playlistItems?part=contentDetails,status&playlistId=ID
  [&maxResults=0..50, default 5][&pageToken=T]``: a
  ``youtube#playlistItemListResponse`` page; ``nextPageToken`` is absent on the
  last page, ``pageInfo.totalResults`` counts every entry. A private entry is
  ``privacyStatus: private``, a deleted one ``privacyStatusUnspecified``, both
  without ``videoPublishedAt``. Errors: 404 ``playlistNotFound``, 400
  ``invalidPageToken``, 400 ``invalidParameter`` (maxResults), 400
  ``missingRequiredParameter`` (no playlistId), 400 ``required`` (no part).
* ``GET /youtube/v3/channels?part=contentDetails&id=UC...``: a
  ``youtube#channelListResponse`` whose item names the uploads playlist
  (``UU`` + the id after ``UC``); for an unknown channel, 200 with
  ``totalResults: 0`` and no ``items`` key, as upstream.

Command line (also runs on Debian's python3-aiohttp 3.8; it needs only the
stdlib, aiohttp and ``influencer_stats.interpreters.videos.synthetic``/``logic.models``)::

    python -m youtube_double --host 127.0.0.1 --port 8081 \\
        [--require-key KEY] [--latency-ms N] [--stall-seconds S]

Control API (JSON), for scripts and perf runs::

    curl -XPOST localhost:8081/_control/fault -d '{"mode": "quota", "count": 2}'
    curl localhost:8081/_control/stats
    curl -XPOST localhost:8081/_control/reset        # also forgets playlists and channels
    curl -XPOST localhost:8081/_control/playlists \
        -d '{"id": "PL1", "videos": ["dQw4w9WgXcQ", "aaaaaaaaaaa"], "private": ["aaaaaaaaaaa"]}'
    curl -XPOST localhost:8081/_control/channels -d '{"id": "UC1", "uploads": ["dQw4w9WgXcQ"]}'

Fault modes (see :data:`FAULT_MODES`) apply to the next ``count`` requests of
any of the three list methods, in arrival order (one switch), or until changed
when ``count`` is omitted/null: ``none``, ``quota``
(403 quotaExceeded), ``rate_limit`` (403 rateLimitExceeded), ``bad_key`` (400,
the current "API key not valid" body), ``server_error`` (500 backendError),
``unavailable`` (503 backendError), ``too_many`` (429), ``stall`` (wait
``stall_seconds`` then answer normally), ``malformed`` (200, truncated JSON),
``bad_count`` (200, the first item's ``viewCount`` is ``bad_value``, default
``"-5"``; ``"abc"`` is the other useful value; on playlistItems.list the first
item's ``contentDetails.videoId`` becomes ``bad_value``, on channels.list its
``relatedPlaylists.uploads``; an answer without items is unchanged) and
``reset`` (the connection is aborted without any response) and ``loop_token``
(playlistItems.list only: each page names as its next the token it was asked
with, the first page its own, so a reader following tokens reads the same page
forever). ``malformed``, ``bad_count`` and ``loop_token`` spoil only a 200 answer: a request the endpoint refuses (400,
404) gets its error as usual. A fault is consumed when the request arrives,
before any other check, so ``count`` always means "the next count requests".

Beware: aiohttp's *client* (3.10+) retries an idempotent request once when the
server disconnects, so a ``reset`` fault with ``count=1`` is invisible to an
aiohttp client (and costs two calls); use ``count=2`` to see the error.

In-process use (tests)::

    async with running_double(require_key="k") as yt:   # port 0: a free port
        yt.state.set_fault("quota", count=1)
        ...  # point the client at yt.url
        assert yt.state.calls == 1

The JSON of a successful response is produced by :func:`render_videos_list`,
which :mod:`youtube_double.nginx_double` also uses to pre-render its
static files, so the two doubles cannot drift apart.

The package's modules, each with one job (this module re-exports their public
names, so import from here):

* ``wire``: the videos.list path, the id limit and the success body;
* ``playlists``: :class:`PlaylistEntry`, the rules of a definition and the bounds;
* ``listings``: the playlistItems.list and channels.list paths, page tokens and bodies;
* ``errors``: the catalogue of Google error bodies;
* ``state``: the fault modes, :class:`FaultState` and :class:`DoubleState`;
* ``endpoints``: what sets each of the three list methods apart;
* ``replies``: bodies into responses (an aborted connection included);
* ``control``: the ``/_control/*`` routes;
* ``app``: :func:`create_app`, the one request path of the list methods;
* ``running``: :func:`running_double`, :class:`RunningDouble`, and
  :func:`define_playlist` / :func:`define_channel` over HTTP;
* ``cli`` and ``__main__``: the command line (:func:`main`);
* ``nginx_double``: the nginx static-file double of videos.list (import it from there).

It is a top-level package beside ``perf/``, not part of the service's package:
it imports ``influencer_stats`` (the synthetic statistics), never the reverse.
"""

from __future__ import annotations

from youtube_double.app import create_app
from youtube_double.cli import main
from youtube_double.errors import (
    BAD_KEY_MESSAGE,
    PLAYLIST_NOT_FOUND_MESSAGE,
    QUOTA_MESSAGE,
    backend_error_body,
    bad_key_body,
    error_body,
    invalid_max_results_body,
    invalid_page_token_body,
    missing_channel_id_body,
    missing_id_body,
    missing_part_body,
    missing_playlist_id_body,
    part_without_statistics_body,
    playlist_not_found_body,
    quota_body,
    rate_limit_body,
    too_many_body,
    too_many_ids_body,
)
from youtube_double.listings import (
    CHANNELS_PATH,
    PLAYLIST_ITEMS_PATH,
    channel_list_response,
    page_token,
    playlist_items_response,
    video_published_at,
)
from youtube_double.playlists import (
    MAX_CHANNELS,
    MAX_HELD_ENTRIES,
    MAX_PLAYLIST_VIDEOS,
    MAX_PLAYLISTS,
    PlaylistEntry,
    Privacy,
    uploads_playlist_id,
)
from youtube_double.running import (
    RunningDouble,
    define_channel,
    define_playlist,
    playlist_definition,
    running_double,
)
from youtube_double.state import (
    BATCH_HISTORY,
    FAULT_MODES,
    MAX_STALL_SECONDS,
    DoubleState,
    FaultMode,
    FaultState,
)
from youtube_double.wire import (
    MAX_IDS_PER_CALL,
    VIDEOS_PATH,
    JsonObject,
    dump_json,
    render_videos_list,
    requested_ids,
    videos_list_response,
)

__all__ = [
    "BAD_KEY_MESSAGE",
    "BATCH_HISTORY",
    "CHANNELS_PATH",
    "FAULT_MODES",
    "MAX_CHANNELS",
    "MAX_HELD_ENTRIES",
    "MAX_IDS_PER_CALL",
    "MAX_PLAYLISTS",
    "MAX_PLAYLIST_VIDEOS",
    "MAX_STALL_SECONDS",
    "PLAYLIST_ITEMS_PATH",
    "PLAYLIST_NOT_FOUND_MESSAGE",
    "QUOTA_MESSAGE",
    "VIDEOS_PATH",
    "DoubleState",
    "FaultMode",
    "FaultState",
    "JsonObject",
    "PlaylistEntry",
    "Privacy",
    "RunningDouble",
    "backend_error_body",
    "bad_key_body",
    "channel_list_response",
    "create_app",
    "define_channel",
    "define_playlist",
    "dump_json",
    "error_body",
    "invalid_max_results_body",
    "invalid_page_token_body",
    "main",
    "missing_channel_id_body",
    "missing_id_body",
    "missing_part_body",
    "missing_playlist_id_body",
    "page_token",
    "part_without_statistics_body",
    "playlist_definition",
    "playlist_items_response",
    "playlist_not_found_body",
    "quota_body",
    "rate_limit_body",
    "render_videos_list",
    "requested_ids",
    "running_double",
    "too_many_body",
    "too_many_ids_body",
    "uploads_playlist_id",
    "video_published_at",
    "videos_list_response",
]
