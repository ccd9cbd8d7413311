"""Slice ``httpx_clients``: the YouTube clients over httpx (``--video-client httpx|httpx-batched``).

Its entry ``httpx`` in the core's ``video_client`` slot calls ``videos.list`` through one shared
``httpx.AsyncClient`` (``interpreters/youtube/httpx_client.py``), one id per call (the ``batching``
slice, when installed, adds ``httpx-batched`` beside it, up to 50); ``add_youtube_client`` enters
it in the YouTube clients' table, so a reader of playlists and channels takes httpx too when the
video client does. Without this slice the core's real client is
aiohttp (the readers' library with the fake), and the profiles naming an httpx client (``v1``,
``v2``) are not offered. The ``httpx`` package stays a dependency: the tests use it as a client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from influencer_stats.bootstrap.slices.slice import Slice
from influencer_stats.bootstrap.videos import add_youtube_client, api_key
from influencer_stats.bootstrap.wiring import Wiring

if TYPE_CHECKING:
    from influencer_stats.interpreters.youtube.httpx_client import HttpxVideosList

SLICE = Slice(
    "httpx_clients",
    "the YouTube clients over httpx (--video-client httpx, and httpx-batched with batching)",
    files=("influencer_stats/interpreters/youtube/httpx_client.py", "tests/unit/test_httpx_clients.py"),
    modules=(
        "influencer_stats.interpreters.youtube.httpx_client",
        "influencer_stats.bootstrap.slices.httpx_clients",
    ),
)


async def _httpx(wiring: Wiring, pool: int) -> HttpxVideosList:
    import logging

    import httpx

    from influencer_stats.interpreters.youtube.httpx_client import HttpxVideosList

    settings = wiring.settings
    logging.getLogger("httpx").setLevel(logging.WARNING)  # it logs every request URL at INFO
    client = httpx.AsyncClient(
        limits=httpx.Limits(max_connections=pool, max_keepalive_connections=pool),
        timeout=httpx.Timeout(settings.upstream_call_timeout_s),
        event_hooks=wiring.tracing.httpx_hooks(),
    )
    wiring.exits.push_async_callback(client.aclose)
    return HttpxVideosList(client, settings.youtube_api_url, api_key(settings))


add_youtube_client("httpx", _httpx, "httpx, one videos.list call per video")
