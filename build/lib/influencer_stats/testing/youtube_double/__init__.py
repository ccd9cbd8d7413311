"""A videos.list-compatible YouTube Data API double on aiohttp.web.

Serves ``GET /youtube/v3/videos`` (the base URL a client is configured with is
``http://HOST:PORT/youtube/v3/videos``) with the statistics of
:func:`influencer_stats.interpreters.videos.synthetic.synthetic_stats`, and ``GET /healthz``
(``200 ok``). Ids for which :func:`~influencer_stats.interpreters.videos.synthetic.is_unknown`
holds (they start with ``X``) are silently absent from ``items``, as deleted or
private videos are upstream.

Command line (also runs on Debian's python3-aiohttp 3.8; it needs only the
stdlib, aiohttp and ``influencer_stats.interpreters.videos.synthetic``/``logic.models``)::

    python -m influencer_stats.testing.youtube_double --host 127.0.0.1 --port 8081 \\
        [--require-key KEY] [--latency-ms N] [--stall-seconds S]

Control API (JSON), for scripts and perf runs::

    curl -XPOST localhost:8081/_control/fault -d '{"mode": "quota", "count": 2}'
    curl localhost:8081/_control/stats
    curl -XPOST localhost:8081/_control/reset

Fault modes (see :data:`FAULT_MODES`) apply to the next ``count`` videos.list
requests, or until changed when ``count`` is omitted/null: ``none``, ``quota``
(403 quotaExceeded), ``rate_limit`` (403 rateLimitExceeded), ``bad_key`` (400,
the current "API key not valid" body), ``server_error`` (500 backendError),
``unavailable`` (503 backendError), ``too_many`` (429), ``stall`` (wait
``stall_seconds`` then answer normally), ``malformed`` (200, truncated JSON),
``bad_count`` (200, the first item's ``viewCount`` is ``bad_value``, default
``"-5"``; ``"abc"`` is the other useful value) and ``reset`` (the connection is
aborted without any response). A fault is consumed when the request arrives,
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
which :mod:`influencer_stats.testing.nginx_double` also uses to pre-render its
static files, so the two doubles cannot drift apart.

The package's modules, each with one job (this module re-exports their public
names, so import from here):

* ``wire``: the videos.list path, the id limit and the success body;
* ``errors``: the catalogue of Google error bodies;
* ``state``: the fault modes, :class:`FaultState` and :class:`DoubleState`;
* ``app``: :func:`create_app` and its response helpers;
* ``running``: :func:`running_double` and :class:`RunningDouble`;
* ``cli`` and ``__main__``: the command line (:func:`main`).
"""

from __future__ import annotations

from influencer_stats.testing.youtube_double.app import create_app
from influencer_stats.testing.youtube_double.cli import main
from influencer_stats.testing.youtube_double.errors import (
    BAD_KEY_MESSAGE,
    QUOTA_MESSAGE,
    backend_error_body,
    bad_key_body,
    error_body,
    missing_id_body,
    missing_part_body,
    part_without_statistics_body,
    quota_body,
    rate_limit_body,
    too_many_body,
    too_many_ids_body,
)
from influencer_stats.testing.youtube_double.running import RunningDouble, running_double
from influencer_stats.testing.youtube_double.state import (
    BATCH_HISTORY,
    FAULT_MODES,
    MAX_STALL_SECONDS,
    DoubleState,
    FaultMode,
    FaultState,
)
from influencer_stats.testing.youtube_double.wire import (
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
    "FAULT_MODES",
    "MAX_IDS_PER_CALL",
    "MAX_STALL_SECONDS",
    "QUOTA_MESSAGE",
    "VIDEOS_PATH",
    "DoubleState",
    "FaultMode",
    "FaultState",
    "JsonObject",
    "RunningDouble",
    "backend_error_body",
    "bad_key_body",
    "create_app",
    "dump_json",
    "error_body",
    "main",
    "missing_id_body",
    "missing_part_body",
    "part_without_statistics_body",
    "quota_body",
    "rate_limit_body",
    "render_videos_list",
    "requested_ids",
    "running_double",
    "too_many_body",
    "too_many_ids_body",
    "videos_list_response",
]
