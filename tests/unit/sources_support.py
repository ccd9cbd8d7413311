"""The ``sources`` slice's part of the HTTP edge in process, for its ``test_http_api_*`` modules:
the API of ``http_api_support`` with the ``SourcesPart`` wired as the root wires it (its route,
its ``CollectionHooks``), and a client that refreshes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import cast

from influencer_stats.algebras import CollectionStore, EventLog
from influencer_stats.algebras.sources import CollectionSources, SourceReader
from influencer_stats.domain.validation import DEFAULT_MAX_VIDEOS
from influencer_stats.http.problems import Reply
from influencer_stats.http.sources_routes import PART, SourcesPart
from influencer_stats.interpreters.readers.fake import FakeSourceReader
from influencer_stats.interpreters.sources.memory import MemoryCollectionSources
from influencer_stats.logic.imports import CollectionImports
from influencer_stats.testing.clock import ManualClock
from tests.unit.http_api_support import Body, Service, service


@dataclass
class SourcesService(Service):
    """The API with the sources' part, and what it built."""

    imports: CollectionImports

    async def refresh(self, collection_id: str, *, authorization: str | None = None) -> Reply:
        """A refresh as clients send it: ``{}`` as JSON."""
        path = f"/collections/{collection_id}/refresh"
        body = Body.json({})
        return await self.request(
            "POST", path, body, authorization=authorization, content_type="application/json"
        )


def sources_service(
    *,
    reader: SourceReader | None = None,
    sources: CollectionSources | None = None,
    refresh_min_interval_s: float = 0.0,
    clock: Callable[[], float] | None = None,
    max_videos: int = DEFAULT_MAX_VIDEOS,
    write_token: str | None = None,
    store: CollectionStore | None = None,
) -> SourcesService:
    """``http_api_support.service`` with the sources' part over ``reader`` (the fake one unless
    told) and ``sources`` (in memory unless told)."""

    def parts(store: CollectionStore, log: EventLog) -> Mapping[str, object]:
        imports = CollectionImports(
            store,
            sources or MemoryCollectionSources(1_000),
            reader or FakeSourceReader(),
            log,
            max_videos=max_videos,
            refresh_min_interval_s=refresh_min_interval_s,
            clock=clock or ManualClock(),
        )
        return {PART: SourcesPart(imports)}

    def part(built: Mapping[str, object]) -> SourcesPart:
        return cast(SourcesPart, built[PART])

    svc = service(
        write_token=write_token,
        max_videos=max_videos,
        store=store,
        parts=parts,
        collections=lambda built: [part(built).hooks()],
    )
    return SourcesService(svc.api, svc.store, svc.log, svc.metrics, part(svc.api.parts).imports)
