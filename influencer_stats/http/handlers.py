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
from returns.result import Failure, Success

from influencer_stats.domain.models import CollectionId, Created, StoreUnavailable
from influencer_stats.domain.validation import InvalidInput, parse_collection_body, parse_collection_id
from influencer_stats.http import docs, problems
from influencer_stats.http.api import HttpApi
from influencer_stats.http.body import json_nests_deeper, repeated_key
from influencer_stats.http.conditional import tagged
from influencer_stats.http.incoming import Incoming
from influencer_stats.http.pagination import next_link, page_body, parse_page_request
from influencer_stats.http.problems import JSON, Reply
from influencer_stats.http.stats_reply import stats_reply

#: Arrays and objects nested deeper than this are refused before decoding (the body needs 2).
MAX_JSON_DEPTH = 32
_decode = msgspec.json.Decoder().decode
_HEALTHY = Reply(200, b'{"status":"ok"}')
_NO_CONTENT = Reply(204, b"", "")  # no content, no Content-Type (problems.BODILESS)


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
    return api.keep(docs.page_reply())


async def docs_asset(api: HttpApi, incoming: Incoming) -> Reply:
    """One allow-listed file of the page: each is a route of its own, named by its template."""
    return api.keep(docs.asset_reply(incoming.route.template.removeprefix(docs.ASSET_PREFIX)))


async def list_collections(api: HttpApi, incoming: Incoming) -> Reply:
    """One page of the sorted ids (``pagination``: ``limit``, ``cursor``, ``next``), and the next
    page's address as a ``Link`` header (RFC 8288) when there is one."""
    match parse_page_request(incoming.query):
        case Failure(invalid):
            return problems.invalid_input(invalid)
        case Success(page):
            pass
    match await api.store.ids(page.after, page.limit + 1):  # one more: is there a next page?
        case Success(ids):
            body = page_body(ids, page.limit)
            cursor = body.get("next")
            if cursor is None:
                return Reply(200, orjson.dumps(body))
            return Reply(
                200, orjson.dumps(body), JSON, (next_link("/collections", incoming.query, str(cursor)),)
            )
        case Failure(error):
            return problems.for_error(error)
    raise AssertionError("unreachable")


async def get_collection(api: HttpApi, incoming: Incoming) -> Reply:
    """The videos, and the fields the installed parts show beside them (``CollectionHooks.shown``),
    with the answer's ``ETag`` (``conditional``)."""
    match parse_collection_id(incoming.collection_id):
        case Failure(invalid):
            return problems.invalid_input(invalid)
        case Success(collection_id):
            pass
    loaded = await api.store.get(collection_id)
    if not isinstance(loaded, Success):
        return problems.for_error(loaded.failure())
    collection = loaded.unwrap()
    fields: dict[str, object] = {}
    for shown in api.shown:
        found = await shown(collection_id, collection.revision)
        if not isinstance(found, Success):
            return problems.for_error(found.failure())
        fields.update(found.unwrap())
    return tagged(Reply(200, orjson.dumps({"videos": collection.videos, **fields})))


async def put_collection(api: HttpApi, incoming: Incoming) -> Reply:
    """Save the ids of the body, unless an installed part takes the body (``CollectionHooks.put``)."""
    body = await incoming.read_body(api.max_body_bytes)
    if body is None:
        return problems.body_too_large(api.max_body_bytes)
    match parse_collection_id(incoming.collection_id):
        case Failure(invalid):
            return problems.invalid_input(invalid)
        case Success(collection_id):
            pass
    document = json_body(body)
    if isinstance(document, Reply):
        return document
    for take in api.put_bodies:
        taken = await take(collection_id, document)
        if taken is not None:
            return taken
    match parse_collection_body(document, api.max_videos):
        case Failure(invalid):
            return problems.invalid_input(invalid)
        case Success(videos):
            pass
    for forget in api.saving_ids:  # first: nothing a part keeps overwrites these ids
        forgotten = await forget(collection_id)
        if not isinstance(forgotten, Success):
            return problems.for_error(forgotten.failure())
    match await api.store.save(collection_id, videos):
        case Failure(error):
            return problems.for_error(error)
        case Success(outcome):
            created = isinstance(outcome, Created)
    api.log.info("collection.saved", collection=collection_id, videos=len(videos), created=created)
    return saved(collection_id, created, orjson.dumps({"videos": videos}))


def json_body(body: bytes) -> object | Reply:
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


def saved(collection_id: CollectionId, created: bool, body: bytes) -> Reply:
    """A saved collection's answer: 201 with its Location when it is new, else 200."""
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
    # Then what the parts forget once it is gone (a retry after a failure here, answered 404,
    # forgets it too): the collection's source, which a refresh under way can no longer keep.
    for forget in api.deleted:
        unkept = await forget(collection_id)
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
