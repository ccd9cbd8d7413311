"""The ``reader`` slot: what reads the videos of a playlist or a channel (a PUT from one, a refresh)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from influencer_stats.algebras.sources import SourceReader
from influencer_stats.bootstrap.quota import quota_spender
from influencer_stats.bootstrap.registry import Registry
from influencer_stats.bootstrap.videos import needs_key, youtube_connections
from influencer_stats.bootstrap.wiring import Wiring

ReaderBuilder = Callable[[Wiring], Awaitable[SourceReader]]
READERS: Registry[ReaderBuilder] = Registry("reader")


@READERS.add("fake", "offline: stable videos derived from each playlist or channel id")
async def _fake(_: Wiring) -> SourceReader:
    from influencer_stats.interpreters.readers.fake import FakeSourceReader

    return FakeSourceReader()


@READERS.add(
    "youtube",
    "playlistItems.list (a unit a page of 50) and channels.list (a unit), never search.list; "
    "on the video client's connections and gate, spending the same quota budget",
    check=needs_key,
)
async def _youtube(wiring: Wiring) -> SourceReader:
    from influencer_stats.interpreters.readers.youtube import YouTubeSourceReader

    settings = wiring.settings
    # The stats' connections and gate: each read is a flow of its own, taking turns with the
    # stats requests, its units spent and its calls timed only once a connection is held.
    client, gate = await youtube_connections(wiring)
    spender = await quota_spender(wiring)
    root = settings.youtube_api_url.rsplit("/", 1)[0]  # …/youtube/v3/videos → …/youtube/v3
    return YouTubeSourceReader(
        client.get,
        root,
        wiring.log,
        gate,
        spend=None if spender is None else spender.spend,
        afford=None if spender is None else spender.afford,
        call_timeout_s=settings.upstream_call_timeout_s,
        deadline_s=settings.import_deadline_s,
        retries=settings.upstream_retries,
    )
