"""Collections read from a playlist or a channel, at the edge: what the ``sources`` slice adds to
the core's ``/collections/{id}``, and its route ``POST /collections/{id}/refresh``.

A ``RouteGroup`` (``SOURCES_ROUTES``) and the ``SourcesPart`` its handler takes
(``HttpApi.parts["sources"]``), whose ``hooks()`` are what the core's collection routes call
(``CollectionHooks``): a PUT naming a playlist or channel is read and saved here, a GET shows the
source kept, a PUT of ids and a DELETE forget it. The core's routes never name any of this.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import orjson
from returns.result import Failure, Result, Success

from influencer_stats.domain.models import (
    CollectionId,
    CollectionSource,
    Created,
    ImportFailure,
    Revision,
    StoreUnavailable,
    VideoId,
)
from influencer_stats.domain.sources import names_a_source, parse_source_body
from influencer_stats.domain.validation import InvalidInput, parse_collection_id
from influencer_stats.http import openapi_sources, problems
from influencer_stats.http.api import MAX_BODY_BYTES
from influencer_stats.http.body import is_json
from influencer_stats.http.handlers import json_body, saved
from influencer_stats.http.incoming import Incoming
from influencer_stats.http.problems import JSON, Reply
from influencer_stats.http.route_table import CollectionHooks, RouteGroup, part_route
from influencer_stats.logic.imports import CollectionImports, Imported

#: The name of the part the handlers take (``HttpApi.parts``).
PART = "sources"
REFRESH = openapi_sources.REFRESH


def collection_body(videos: tuple[VideoId, ...], source: CollectionSource | None, **counts: int) -> bytes:
    """A collection as the API shows it: its videos, and where they were read from, if anywhere."""
    if source is None:
        return orjson.dumps({"videos": videos, **counts})
    return orjson.dumps({"videos": videos, "source": {source.kind: source.id}, **counts})


@dataclass(frozen=True, slots=True)
class SourcesPart:
    """What the slice's handler and hooks use: the imports (the sources kept, the reader)."""

    imports: CollectionImports

    def hooks(self) -> CollectionHooks:
        """What the core's ``/collections/{id}`` calls of this part."""
        return CollectionHooks(
            put=self.put,
            saving_ids=self.imports.saved_as_ids,
            shown=self.shown,
            deleted=self.imports.saved_as_ids,
        )

    async def put(self, collection_id: CollectionId, document: object) -> Reply | None:
        """A PUT naming a playlist or channel: read it, save its videos, keep it; None for any other."""
        if not names_a_source(document):
            return None
        match parse_source_body(document):
            case Failure(invalid):
                return problems.invalid_input(invalid)
            case Success(source):
                return imported(collection_id, await self.imports.read(collection_id, source))
        raise AssertionError("unreachable")

    async def shown(
        self, collection_id: CollectionId, revision: Revision
    ) -> Result[Mapping[str, object], StoreUnavailable]:
        """The source kept for the collection at ``revision`` (one kept at another is not its own:
        it was written or re-created since), as a GET shows it."""
        kept = await self.imports.sources.get(collection_id)
        if not isinstance(kept, Success):
            return Failure(kept.failure())
        found = kept.unwrap()
        if found is None or found.revision != revision:
            return Success({})
        return Success({"source": {found.source.kind: found.source.id}})


async def refresh_collection(part: SourcesPart, incoming: Incoming) -> Reply:
    """Read the collection's playlist or channel again: new uploads join, videos gone leave.

    The body is the empty JSON object, sent as ``application/json`` (else 415): a request
    a cross-site form cannot send, so without a write token no page a browser visits
    spends the quota."""
    if not is_json(incoming.content_type):
        return problems.unsupported_media_type(JSON)
    body = await incoming.read_body(MAX_BODY_BYTES)
    if body is None:
        return problems.body_too_large(MAX_BODY_BYTES)
    parsed = parse_collection_id(incoming.collection_id)
    if not isinstance(parsed, Success):
        return problems.invalid_input(parsed.failure())
    document = json_body(body)
    if isinstance(document, Reply):
        return document
    if document != {}:
        field = next(iter(document))[:64] if isinstance(document, dict) else "body"
        return problems.invalid_input(InvalidInput(field, None, "is not taken: the body is {}"))
    collection_id = parsed.unwrap()
    return imported(collection_id, await part.imports.refresh(collection_id))


def imported(collection_id: CollectionId, done: Result[Imported, ImportFailure]) -> Reply:
    """A read's answer: the collection now, its source, and what joined and left it."""
    if not isinstance(done, Success):
        return problems.for_error(done.failure())
    read = done.unwrap()
    body = collection_body(read.videos, read.source, added=read.added, removed=read.removed)
    return saved(collection_id, isinstance(read.outcome, Created), body)


SOURCES_ROUTES = RouteGroup(
    PART,
    (part_route(PART, REFRESH, POST=refresh_collection),),
    openapi_sources.operations,
    openapi_sources.SCHEMAS,
    openapi_sources.COLLECTION_DOC,
)
