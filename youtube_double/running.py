"""Running the double on a real socket inside a test's event loop, and defining its playlists over HTTP.

In the same process, define playlists and channels on the state
(``yt.state.set_playlist(...)``); :func:`define_playlist` and
:func:`define_channel` do it through the control API, for a double in
another process or container.
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

import aiohttp
from aiohttp import web

from youtube_double.app import create_app
from youtube_double.listings import CHANNELS_PATH, PLAYLIST_ITEMS_PATH
from youtube_double.state import DoubleState
from youtube_double.wire import VIDEOS_PATH, JsonObject, dump_json


@dataclass(frozen=True, slots=True)
class RunningDouble:
    """A double listening on a real socket."""

    host: str
    port: int
    state: DoubleState

    @property
    def base(self) -> str:
        """``http://host:port`` (for /healthz and /_control/...)."""
        return f"http://{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """The videos.list base URL a client is configured with."""
        return f"{self.base}{VIDEOS_PATH}"

    @property
    def playlist_items_url(self) -> str:
        """The playlistItems.list URL."""
        return f"{self.base}{PLAYLIST_ITEMS_PATH}"

    @property
    def channels_url(self) -> str:
        """The channels.list URL."""
        return f"{self.base}{CHANNELS_PATH}"


@asynccontextmanager
async def running_double(
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    state: DoubleState | None = None,
    require_key: str | None = None,
    latency_ms: int = 0,
    stall_seconds: float = 30.0,
) -> AsyncIterator[RunningDouble]:
    """Run the double on ``host:port`` (0: a free port) for the ``async with`` body.

    ``stall_seconds`` is the default stall of a fresh state (ignored when
    ``state`` is given). On exit, stalled requests are woken and the server
    is stopped.
    """
    st = state if state is not None else DoubleState(default_stall_seconds=stall_seconds)
    app = create_app(st, require_key=require_key, latency_ms=latency_ms)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        actual_port = port
        for address in runner.addresses:
            if isinstance(address, tuple) and len(address) >= 2:
                actual_port = int(address[1])
                break
        yield RunningDouble(host=host, port=actual_port, state=st)
    finally:
        await runner.cleanup()


def playlist_definition(
    playlist_id: str,
    videos: Sequence[str],
    *,
    private: Iterable[str] = (),
    deleted: Iterable[str] = (),
    unlisted: Iterable[str] = (),
) -> JsonObject:
    """The body of ``POST /_control/playlists`` (for any HTTP client)."""
    return {
        "id": playlist_id,
        "videos": list(videos),
        "private": list(private),
        "deleted": list(deleted),
        "unlisted": list(unlisted),
    }


async def _post_control(session: aiohttp.ClientSession, url: str, body: JsonObject) -> JsonObject:
    # A stream, not bytes: aiohttp warns about a body over 1 MiB given as bytes (a long playlist is).
    payload = io.BytesIO(dump_json(body))
    async with session.post(url, data=payload, headers={"Content-Type": "application/json"}) as resp:
        answer: JsonObject = await resp.json()
        if resp.status != 200:
            raise ValueError(f"{url}: {resp.status} {answer.get('error')}")
        return answer


async def define_playlist(
    session: aiohttp.ClientSession,
    base: str,
    playlist_id: str,
    videos: Sequence[str],
    *,
    private: Iterable[str] = (),
    deleted: Iterable[str] = (),
    unlisted: Iterable[str] = (),
) -> JsonObject:
    """Define a playlist on the double at ``base`` (``http://host:port``); ValueError if refused.

    The answer is ``{"id", "entries"}``; see :meth:`DoubleState.set_playlist` for the rules.
    """
    body = playlist_definition(playlist_id, videos, private=private, deleted=deleted, unlisted=unlisted)
    return await _post_control(session, f"{base}/_control/playlists", body)


async def define_channel(
    session: aiohttp.ClientSession, base: str, channel_id: str, uploads: Sequence[str]
) -> JsonObject:
    """Define a channel and its uploads on the double at ``base``; ValueError if refused.

    The answer is ``{"id", "uploads": "UU...", "entries"}``.
    """
    body = {"id": channel_id, "uploads": list(uploads)}
    return await _post_control(session, f"{base}/_control/channels", body)
