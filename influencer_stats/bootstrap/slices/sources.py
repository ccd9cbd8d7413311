"""Slice ``sources``: collections read from a YouTube playlist or channel, kept and read again.

Its own slots, ``reader`` (what reads a playlist's or channel's videos: ``youtube``, or ``fake``
with the fake video client) and ``sources`` (where each collection keeps its source:
``memory|sqlite|redis``, by default where the collections are), and its part of the edge: a PUT
of ``{"playlist": …}`` or ``{"channel": …}``, the source a GET shows, what a PUT of ids and a
DELETE forget (``CollectionHooks``), ``POST /collections/{id}/refresh``
(``http/sources_routes.py``), and the refresher it starts
(``INFLUENCER_STATS_SOURCE_REFRESH_INTERVAL``). Without this slice a PUT takes only ids, a GET
shows no source, and no refresher runs.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from influencer_stats.algebras import CollectionStatsQuery, CollectionStore
from influencer_stats.algebras.sources import CollectionSources, SourceReader
from influencer_stats.bootstrap.parts import PARTS, Built, Part, quota_short
from influencer_stats.bootstrap.quota import quota_spender
from influencer_stats.bootstrap.registry import Registry, Slot
from influencer_stats.bootstrap.slices.slice import INTERVAL_CLAIMS, Slice
from influencer_stats.bootstrap.videos import needs_key, youtube_connections
from influencer_stats.bootstrap.wiring import Wiring
from influencer_stats.domain.models import DAY_S
from influencer_stats.http.sources_routes import SOURCES_ROUTES, SourcesPart
from influencer_stats.logic.imports import CollectionImports

SourcesBuilder = Callable[[Wiring], Awaitable[CollectionSources]]
SOURCES: Registry[SourcesBuilder] = Registry("sources")
ReaderBuilder = Callable[[Wiring], Awaitable[SourceReader]]
READERS: Registry[ReaderBuilder] = Registry("reader")
SLICE = Slice(
    "sources",
    "collections read from a YouTube playlist or channel, kept and read again on an interval",
    files=(
        "influencer_stats/algebras/sources.py",
        "influencer_stats/domain/sources.py",
        "influencer_stats/interpreters/sources",
        "influencer_stats/interpreters/readers",
        "influencer_stats/logic/imports.py",
        "influencer_stats/logic/refreshes.py",
        "influencer_stats/http/sources_routes.py",
        "influencer_stats/http/openapi_sources.py",
        "tests/unit/sources_support.py",
        "tests/unit/test_http_api_sources.py",
        "tests/unit/test_http_api_source_bodies.py",
        "tests/unit/test_import_races.py",
        "tests/unit/test_refreshes.py",
        "tests/unit/test_source_*.py",
        "tests/unit/test_sources_*.py",
        "tests/contract/test_collection_sources.py",
        "tests/contract/test_source_reader*.py",  # test_source_reader_quota.py: the quota slice's too
        "tests/integration/test_sources*.py",
        "tests/integration/test_source_*.py",
        "tests/integration/test_tracing_sources.py",  # the tracing slice's too: it needs both
    ),
    modules=(
        "influencer_stats.algebras.sources",
        "influencer_stats.domain.sources",
        "influencer_stats.interpreters.sources",
        "influencer_stats.interpreters.readers",
        "influencer_stats.logic.imports",
        "influencer_stats.logic.refreshes",
        "influencer_stats.http.sources_routes",
        "influencer_stats.http.openapi_sources",
        "influencer_stats.bootstrap.slices.sources",
        "tests.unit.sources_support",
    ),
    shared=INTERVAL_CLAIMS,
    slots=(
        Slot(
            "reader",
            "what reads a playlist's or channel's videos (by default: fake with the fake video client)",
            READERS,
            default="youtube",
            same_as="video_client",
        ),
        Slot(
            "sources",
            "where each collection read from a playlist or channel keeps its source (by default where the collections are)",
            SOURCES,
            default="memory",
            same_as="store",
        ),
    ),
)

#: The most collections the in-process sources keep a claim of (a few dozen bytes each); the
#: sources themselves are never dropped (one per collection, which the store bounds).
MEMORY_CLAIMS = 10_000
#: How long a claim is kept in Redis after it was taken: far longer than any refresh interval
#: (a claim gone may be taken again in its slot), short enough that none accumulates.
CLAIM_KEEP_S = 30 * DAY_S


@SOURCES.add(
    "memory",
    "in process memory, one process, gone at exit",
    per_process=("collection sources", "--sources sqlite or redis"),
)
async def _memory(_: Wiring) -> CollectionSources:
    from influencer_stats.interpreters.sources.memory import MemoryCollectionSources

    return MemoryCollectionSources(MEMORY_CLAIMS)


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


async def build_sources(wiring: Wiring) -> CollectionSources:
    return await SOURCES[wiring.settings.choices.one("sources")].build(wiring)


async def build_reader(wiring: Wiring) -> SourceReader:
    """The reader the settings choose; inside a ``sources.read`` span per read when tracing."""
    reader = await READERS[wiring.settings.choices.one("reader")].build(wiring)
    spans = wiring.tracing.spans()
    if spans is None:
        return reader
    from influencer_stats.interpreters.readers.traced import TracedReader

    return TracedReader(reader, spans)


def start_refreshes(wiring: Wiring, store: CollectionStore, imports: CollectionImports) -> None:
    """Read every collection's playlist or channel again each ``source_refresh_interval_s``, when set."""
    from influencer_stats.logic.imports import SourceRefresher

    interval_s = wiring.settings.source_refresh_interval_s
    if interval_s == 0:
        return
    refresher = SourceRefresher(
        store,
        imports,
        wiring.log,
        interval_s=interval_s,
        clock=time.time,  # wall time: hosts agree on an interval's start
        short=quota_short(wiring),
    )
    wiring.background(refresher.run(), "collection-sources:refreshes")


async def _part(wiring: Wiring, store: CollectionStore, _: CollectionStatsQuery) -> Built:
    """The sources and the reader the settings choose, the refresher started; the edge's part."""
    settings = wiring.settings
    imports = CollectionImports(
        store,
        await build_sources(wiring),
        await build_reader(wiring),
        wiring.log,
        max_videos=settings.max_videos,
        refresh_min_interval_s=settings.refresh_min_interval_s,
        clock=time.monotonic,
    )
    start_refreshes(wiring, store, imports)
    part = SourcesPart(imports)
    return Built(part, collections=part.hooks())


PARTS.append(Part(SOURCES_ROUTES, _part))
