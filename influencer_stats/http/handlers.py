"""What each core route does: one handler per route and method, ``routes.CORE`` pairs them.

A handler takes the ``HttpApi`` (the algebras and limits the root built it
with) and the request, and answers with a ``Reply``; ``HttpApi.answer`` calls
it once the request id is bound, the method allowed and a write authorized,
and turns a bug it raises into a 500. Expected failures come back from the
algebras as values, and ``problems`` answers each one.
"""

from __future__ import annotations

import msgspec
import orjson
from returns.result import Failure, Result, Success

from influencer_stats.domain.models import (
    CollectionId,
    CollectionSource,
    Created,
    ImportFailure,
    StoreUnavailable,
    VideoId,
)
from influencer_stats.domain.validation import InvalidInput, parse_collection_id, parse_put_body
from influencer_stats.http import docs, problems
from influencer_stats.http.api import HttpApi, Incoming
from influencer_stats.http.body import is_json, json_nests_deeper, repeated_key
from influencer_stats.http.pagination import page_body, parse_page_request
from influencer_stats.http.problems import JSON, Reply
from influencer_stats.http.stats_reply import stats_reply
from influencer_stats.logic.imports import Imported

#: Arrays and objects nested deeper than this are refused before decoding (the body needs 2).
MAX_JSON_DEPTH = 32
_decode = msgspec.json.Decoder().decode
_HEALTHY = Reply(200, b'{"status":"ok"}')
_NO_CONTENT = Reply(204, b"")


async def liveness(api: HttpApi, _: Incoming) -> Reply:
    """The process answers."""
    return _HEALTHY


async def readiness(api: HttpApi, _: Incoming) -> Reply:
    """Every dependency of this profile answers."""
    results = {name: await check() for name, check in api.checks.items()}
    failing = sorted(name for name, ok in results.items() if not ok)
    if failing:
        return problems.problem(
            503,
            "not-ready",
            "Not ready",
            f"dependencies not answering: {', '.join(failing)}",
            headers=(("retry-after", "1"),),
            checks={name: "ok" if ok else "failing" for name, ok in results.items()},
        )
    return Reply(200, orjson.dumps({"status": "ready", "checks": dict.fromkeys(results, "ok")}))


async def scrape_metrics(api: HttpApi, _: Incoming) -> Reply:
    body, content_type = api.metrics.render()
    return Reply(200, body, content_type)


async def describe(api: HttpApi, _: Incoming) -> Reply:
    """The OpenAPI document."""
    return api.openapi


async def docs_page(api: HttpApi, _: Incoming) -> Reply:
    """Swagger UI's page over the OpenAPI document."""
    return docs.page_reply()


async def docs_asset(api: HttpApi, incoming: Incoming) -> Reply:
    """One allow-listed file of the page: each is a route of its own, named by its template."""
    return docs.asset_reply(incoming.route.template.removeprefix(docs.ASSET_PREFIX))


async def list_collections(api: HttpApi, incoming: Incoming) -> Reply:
    """One page of the sorted ids (``pagination``: ``limit``, ``cursor``, ``next``)."""
    match parse_page_request(incoming.query):
        case Failure(invalid):
            return problems.invalid_input(invalid)
        case Success(page):
            pass
    match await api.store.ids(page.after, page.limit + 1):  # one more: is there a next page?
        case Success(ids):
            return Reply(200, orjson.dumps(page_body(ids, page.limit)))
        case Failure(error):
            return problems.for_error(error)
    raise AssertionError("unreachable")


def _collection_body(videos: tuple[VideoId, ...], source: CollectionSource | None, **counts: int) -> bytes:
    """A collection as the API shows it: its videos, and where they were read from, if anywhere."""
    if source is None:
        return orjson.dumps({"videos": videos, **counts})
    return orjson.dumps({"videos": videos, "source": {source.kind: source.id}, **counts})


async def get_collection(api: HttpApi, incoming: Incoming) -> Reply:
    match parse_collection_id(incoming.collection_id):
        case Failure(invalid):
            return problems.invalid_input(invalid)
        case Success(collection_id):
            pass
    loaded = await api.store.get(collection_id)
    if not isinstance(loaded, Success):
        return problems.for_error(loaded.failure())
    kept = await api.imports.sources.get(collection_id)
    if not isinstance(kept, Success):
        return problems.for_error(kept.failure())
    collection, found = loaded.unwrap(), kept.unwrap()
    # A source kept at another revision is not this collection's (written or re-created since).
    source = found.source if found is not None and found.revision == collection.revision else None
    return Reply(200, _collection_body(collection.videos, source))


async def put_collection(api: HttpApi, incoming: Incoming) -> Reply:
    body = await incoming.read_body(api.max_body_bytes)
    if body is None:
        return problems.body_too_large(api.max_body_bytes)
    match parse_collection_id(incoming.collection_id):
        case Failure(invalid):
            return problems.invalid_input(invalid)
        case Success(collection_id):
            pass
    document = _json_body(body)
    if isinstance(document, Reply):
        return document
    match parse_put_body(document, api.max_videos):
        case Failure(invalid):
            return problems.invalid_input(invalid)
        case Success(CollectionSource() as source):
            return _imported(collection_id, await api.imports.read(collection_id, source))
        case Success(tuple() as videos):
            pass
    forgotten = await api.imports.saved_as_ids(collection_id)  # first: no refresh overwrites these ids
    if not isinstance(forgotten, Success):
        return problems.for_error(forgotten.failure())
    match await api.store.save(collection_id, videos):
        case Failure(error):
            return problems.for_error(error)
        case Success(outcome):
            created = isinstance(outcome, Created)
    api.log.info("collection.saved", collection=collection_id, videos=len(videos), created=created)
    return _saved(collection_id, created, _collection_body(videos, None))


def _json_body(body: bytes) -> object | Reply:
    """The decoded JSON body, or the problem: too deep, not JSON, or a key given twice."""
    if json_nests_deeper(body, MAX_JSON_DEPTH):
        return problems.malformed_json(
            f"the body nests arrays or objects deeper than {MAX_JSON_DEPTH} levels (or unbalanced)"
        )
    try:
        document: object = _decode(body)
    except msgspec.DecodeError as exc:
        return problems.malformed_json(f"the body is not valid JSON: {exc}")
    repeated = repeated_key(body, document)
    if repeated is not None:  # not the last one silently winning: which did the client mean?
        return problems.invalid_input(InvalidInput(repeated[:64], None, "is given more than once"))
    return document


async def refresh_collection(api: HttpApi, incoming: Incoming) -> Reply:
    """Read the collection's playlist or channel again: new uploads join, videos gone leave.

    The body is the empty JSON object, sent as ``application/json`` (else 415): a request
    a cross-site form cannot send, so without a write token no page a browser visits
    spends the quota."""
    if not is_json(incoming.content_type):
        return problems.unsupported_media_type(JSON)
    body = await incoming.read_body(api.max_body_bytes)
    if body is None:
        return problems.body_too_large(api.max_body_bytes)
    parsed = parse_collection_id(incoming.collection_id)
    if not isinstance(parsed, Success):
        return problems.invalid_input(parsed.failure())
    document = _json_body(body)
    if isinstance(document, Reply):
        return document
    if document != {}:
        field = next(iter(document))[:64] if isinstance(document, dict) else "body"
        return problems.invalid_input(InvalidInput(field, None, "is not taken: the body is {}"))
    collection_id = parsed.unwrap()
    return _imported(collection_id, await api.imports.refresh(collection_id))


def _imported(collection_id: CollectionId, imported: Result[Imported, ImportFailure]) -> Reply:
    if not isinstance(imported, Success):
        return problems.for_error(imported.failure())
    done = imported.unwrap()
    body = _collection_body(done.videos, done.source, added=done.added, removed=done.removed)
    return _saved(collection_id, isinstance(done.outcome, Created), body)


def _saved(collection_id: CollectionId, created: bool, body: bytes) -> Reply:
    if created:
        return Reply(201, body, JSON, (("location", f"/collections/{collection_id}"),))
    return Reply(200, body)


async def delete_collection(api: HttpApi, incoming: Incoming) -> Reply:
    match parse_collection_id(incoming.collection_id):
        case Failure(invalid):
            return problems.invalid_input(invalid)
        case Success(collection_id):
            pass
    # First: a failure leaves the collection, for the client to retry.
    for forget in api.forgets:  # what the installed parts keep of it (the history's snapshots)
        forgotten = await forget(collection_id)
        if not isinstance(forgotten, Success):
            return problems.for_error(forgotten.failure())
    deleted = await api.store.delete(collection_id)
    if isinstance(deleted, Failure) and isinstance(deleted.failure(), StoreUnavailable):
        return problems.for_error(deleted.failure())
    # Then its source (a retry after a failure here, answered 404, forgets it too): deleted first,
    # a refresh that kept a source meanwhile sees the collection gone and forgets it itself.
    unkept = await api.imports.saved_as_ids(collection_id)
    if not isinstance(unkept, Success):
        return problems.for_error(unkept.failure())
    if not isinstance(deleted, Success):
        return problems.for_error(deleted.failure())
    api.log.info("collection.deleted", collection=collection_id)
    return _NO_CONTENT


async def collection_stats(api: HttpApi, incoming: Incoming) -> Reply:
    """The stats query's answer (the use case, through any stats cache), or its failure's problem."""
    # The hottest path: isinstance, not match, which costs an ABC check per class pattern
    # (perf/RESULTS.md, "What was cut": 0.9 µs per match even with Success first).
    parsed = parse_collection_id(incoming.collection_id)
    if not isinstance(parsed, Success):
        return problems.invalid_input(parsed.failure())
    answer = await api.stats.stats(parsed.unwrap())
    if not isinstance(answer, Success):
        return problems.for_error(answer.failure())
    return stats_reply(answer.unwrap())
