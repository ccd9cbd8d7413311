"""The stats history's routes: its snapshots a page at a time, as a chart, and their growth.

A ``RouteGroup`` (``HISTORY_ROUTES``): the root adds it to the route table and the OpenAPI
document when the history is installed, and hands ``HttpApi`` the ``HistoryPart`` its handlers
take (``HttpApi.parts["history"]``), built from the ``history`` slot's choice. Each 200 carries
its ``ETag`` (``conditional``: a poller's unchanged page is a 304), and a page followed by
another its ``Link`` (``pagination.next_link``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote

import orjson
from returns.result import Success

from influencer_stats.algebras import CollectionStore, EventLog
from influencer_stats.algebras.history import StatsHistory
from influencer_stats.domain.history import StatsPoint
from influencer_stats.domain.models import CollectionId
from influencer_stats.domain.validation import InvalidInput, parse_collection_id
from influencer_stats.http import openapi_history, problems
from influencer_stats.http.conditional import tagged
from influencer_stats.http.history_chart import chart_reply
from influencer_stats.http.history_query import (
    GROWTH,
    HISTORY,
    HISTORY_CHART,
    growth_body,
    history_body,
    history_page,
    parse_history_request,
    parse_time,
    query_timeout,
)
from influencer_stats.http.incoming import Incoming
from influencer_stats.http.pagination import DEFAULT_LIMIT, MAX_LIMIT, next_link
from influencer_stats.http.problems import JSON, Reply
from influencer_stats.http.route_table import RouteGroup, part_route

__all__ = ["GROWTH", "HISTORY", "HISTORY_CHART", "HISTORY_ROUTES", "HistoryPart"]

#: The name of the part the handlers take (``HttpApi.parts``).
PART = "history"


@dataclass(frozen=True, slots=True)
class HistoryPart:
    """What the history's handlers read: the collections (is it one?), the history, the log,
    and how long a query may run before it is stopped and answered a 503."""

    store: CollectionStore
    history: StatsHistory
    log: EventLog
    timeout_s: float


async def _known(part: HistoryPart, incoming: Incoming) -> CollectionId | Reply:
    """The collection's id if it is a stored collection's, else the problem to answer."""
    parsed = parse_collection_id(incoming.collection_id)
    if not isinstance(parsed, Success):
        return problems.invalid_input(parsed.failure())
    collection_id: CollectionId = parsed.unwrap()
    loaded = await part.store.get(collection_id)
    if not isinstance(loaded, Success):
        return problems.for_error(loaded.failure())
    return collection_id


async def _history_page(
    part: HistoryPart, incoming: Incoming, limit: int
) -> tuple[CollectionId, list[StatsPoint], int | None] | Reply:
    """The stored collection's page of snapshots the query asks for (``limit`` unless it says),
    where the next page starts, or the problem to answer."""
    known = await _known(part, incoming)
    if isinstance(known, Reply):
        return known
    request = parse_history_request(incoming.query, limit=limit)
    if not isinstance(request, Success):
        return problems.invalid_input(request.failure())
    try:
        async with asyncio.timeout(part.timeout_s):  # cancelled: its SQLite read stops too
            page = await history_page(part.history, known, request.unwrap())
    except TimeoutError:
        return _history_timeout(part, known)
    if not isinstance(page, Success):
        return problems.for_error(page.failure())
    points, next_ms = page.unwrap()
    return known, points, next_ms


def _history_timeout(part: HistoryPart, collection_id: CollectionId) -> Reply:
    """A history query stopped at its deadline (its SQLite read stopped with it): logged, a 503."""
    part.log.warning("history.query_timeout", collection=collection_id, timeout_s=part.timeout_s)
    return query_timeout(part.timeout_s)


async def collection_history(part: HistoryPart, incoming: Incoming) -> Reply:
    """The collection's snapshots, oldest first, a page at a time (``history_query``)."""
    page = await _history_page(part, incoming, DEFAULT_LIMIT)
    if isinstance(page, Reply):
        return page
    collection_id, points, next_ms = page
    body = orjson.dumps(history_body(points, next_ms))
    if next_ms is None:
        return tagged(Reply(200, body))
    # The cursor replaces since; the range's end, the step and the limit go on.
    path = HISTORY.replace("{id}", quote(collection_id, safe=""))
    link = next_link(path, incoming.query, str(next_ms), kept=("until", "step", "limit"))
    return tagged(Reply(200, body, JSON, (link,)))


async def collection_history_chart(part: HistoryPart, incoming: Incoming) -> Reply:
    """The same points as an SVG chart (``history_chart``): 1,000 unless ``limit`` says fewer."""
    page = await _history_page(part, incoming, MAX_LIMIT)
    if isinstance(page, Reply):
        return page
    collection_id, points, _ = page
    return tagged(chart_reply(collection_id, points))


async def collection_growth(part: HistoryPart, incoming: Incoming) -> Reply:
    """How each figure changed from the first snapshot at or after ``since`` to the last."""
    known = await _known(part, incoming)
    if isinstance(known, Reply):
        return known
    given = [value for name, value in parse_qsl(incoming.query, keep_blank_values=True) if name == "since"]
    if len(given) != 1:
        reason = "is required" if not given else "must be given at most once"
        return problems.invalid_input(InvalidInput("since", given[-1] if given else None, reason))
    since = parse_time("since", given[0])
    if not isinstance(since, Success):
        return problems.invalid_input(since.failure())
    try:
        async with asyncio.timeout(part.timeout_s):
            body = await growth_body(part.history, known, since.unwrap())
    except TimeoutError:
        return _history_timeout(part, known)
    if not isinstance(body, Success):
        return problems.for_error(body.failure())
    growth = body.unwrap()
    if growth is None:
        return problems.problem(
            404,
            "no-snapshots",
            "No snapshots",
            f"collection {known} has no snapshot at or after {given[0][:40]}",
        )
    return tagged(Reply(200, orjson.dumps(growth)))


HISTORY_ROUTES = RouteGroup(
    PART,
    (
        part_route(PART, HISTORY, GET=collection_history),
        part_route(PART, GROWTH, GET=collection_growth),
        part_route(PART, HISTORY_CHART, GET=collection_history_chart),
    ),
    openapi_history.operations,
    openapi_history.SCHEMAS,
)
