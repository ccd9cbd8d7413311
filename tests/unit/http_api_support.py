"""The HTTP edge in process, for the ``test_http_api_*`` modules: doubles, client, reply checks.

No socket and no framework: a request goes through the route table as the
hand-routed servers send it (``ROUTES.match_raw``, then ``HttpApi.serve`` (``answer``, the id added), or
``refuse`` when no template matches), its body through ``read_bounded`` as every
server streams it. ``tests/integration/test_api.py`` and ``test_api_raw.py`` prove each server adapter
speaks HTTP the same way over a real socket.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import orjson
from returns.result import Result

from influencer_stats.algebras import CollectionStatsQuery, CollectionStore, EventLog, Metrics
from influencer_stats.algebras.event_log import LOG_CONTEXT
from influencer_stats.bootstrap.edge import ROUTES
from influencer_stats.bounded import read_bounded
from influencer_stats.domain.models import CollectionId, StatsAnswer, StatsError
from influencer_stats.domain.validation import DEFAULT_MAX_VIDEOS
from influencer_stats.http import problems
from influencer_stats.http.api import HttpApi
from influencer_stats.http.incoming import Incoming
from influencer_stats.http.layers import EdgeLayer
from influencer_stats.http.problems import PROBLEM_JSON, Reply
from influencer_stats.http.route_table import CollectionHooks, Forget, Route
from influencer_stats.interpreters.collections.memory_dict import DictCollectionStore
from influencer_stats.interpreters.metrics.noop import NoMetrics
from influencer_stats.interpreters.videos.fake import FakeVideoStatsSource
from influencer_stats.logic.service import GetStats
from influencer_stats.testing.event_log import CapturingEventLog

ORIGINAL_VIDEOS = ["-4lB5EKS5Uk", "-jlLkTtgWUk", "1FEFpk-uIYo"]
TOKEN = "write-token-0123456789abcdef"
OPENAPI = b'{"openapi":"3.1.0"}'


# --- doubles -------------------------------------------------------------------------------------


class ContextLog(CapturingEventLog):
    """Records each event with the fields bound in ``LOG_CONTEXT`` when it was logged."""

    def _add(self, level: str, event: str, fields: dict[str, object]) -> None:
        super()._add(level, event, {**LOG_CONTEXT.get(), **fields})


class RecordingMetrics(NoMetrics):
    """Keeps every request as (route, method, status)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, int]] = []

    def request(self, route: str, method: str, status: int, seconds: float) -> None:
        assert seconds >= 0
        self.requests.append((route, method, status))

    def render(self) -> tuple[bytes, str]:
        return b"requests_total 1\n", "text/plain; version=0.0.4; charset=utf-8"


@dataclass
class Body:
    """A request body as a server streams it: chunks and maybe a declared length.

    ``read`` counts the chunks the API consumed, to prove what was never read.
    """

    chunks: list[bytes]
    declared: int | None = None
    read: int = 0

    @classmethod
    def json(cls, document: object) -> Body:
        data = orjson.dumps(document)
        return cls([data], len(data))

    async def _stream(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            self.read += 1
            yield chunk

    async def __call__(self, limit: int) -> bytes | None:
        return await read_bounded(self._stream(), limit, self.declared)


@dataclass
class Service:
    """An ``HttpApi`` on in-memory doubles, and a client that calls it like a server does."""

    api: HttpApi
    store: CollectionStore
    log: ContextLog
    metrics: RecordingMetrics

    async def request(
        self,
        method: str,
        path: str,
        body: Body | None = None,
        *,
        request_id: str | None = None,
        authorization: str | None = None,
        content_type: str | None = None,
        if_none_match: str | None = None,
    ) -> Reply:
        """``path`` as a client sends it (percent-encoded): routed as received (``match_raw``)."""
        path, _, query = path.partition("?")
        route, collection_id = ROUTES.match_raw(path)
        if route is None:
            return self.api.refuse(problems.route_not_found(path), "unmatched", method, request_id)
        incoming = Incoming(
            route,
            method,
            collection_id,
            request_id,
            authorization,
            body or Body([]),
            query,
            content_type=content_type,
            if_none_match=if_none_match,
        )
        return await self.api.serve(incoming)

    async def put(
        self,
        collection_id: str,
        document: object,
        *,
        request_id: str | None = None,
        authorization: str | None = None,
    ) -> Reply:
        body = Body.json(document)
        path = f"/collections/{collection_id}"
        return await self.request("PUT", path, body, request_id=request_id, authorization=authorization)

    async def get(
        self, path: str, *, request_id: str | None = None, if_none_match: str | None = None
    ) -> Reply:
        return await self.request("GET", path, request_id=request_id, if_none_match=if_none_match)


def _use_case(store: CollectionStore, log: EventLog) -> CollectionStatsQuery:
    return GetStats(store, FakeVideoStatsSource(), log)


def service(
    *,
    write_token: str | None = None,
    max_videos: int = DEFAULT_MAX_VIDEOS,
    store: CollectionStore | None = None,
    stats: Callable[[CollectionStore, EventLog], CollectionStatsQuery] = _use_case,
    checks: Mapping[str, bool] | None = None,
    parts: Callable[[CollectionStore, EventLog], Mapping[str, object]] | None = None,
    forgets: Sequence[Forget] = (),
    collections: Callable[[Mapping[str, object]], Sequence[CollectionHooks]] | None = None,
    gzip_min_bytes: int = 0,
    layers: Callable[[EventLog, Metrics], Sequence[EdgeLayer]] | None = None,
    openapi: bytes = OPENAPI,
) -> Service:
    """The API on a dict store and the stats use case over the fake source, unless told otherwise;
    ``parts`` builds, from the store and the log, what a slice's routes take by name (``Route.part``),
    a DELETE runs ``forgets``, and ``collections`` gives, from what ``parts`` built, what they add
    to ``/collections/{id}`` (as the root wires a slice's ``Part``); ``layers`` builds, from the log
    and the metrics, what slices fold around the answer, outermost first (``EDGE_LAYERS``)."""
    store = store or DictCollectionStore()
    log = ContextLog()
    metrics = RecordingMetrics()

    def check(ok: bool) -> Callable[[], Awaitable[bool]]:
        async def answer() -> bool:
            return ok

        return answer

    built = parts(store, log) if parts else {}
    api = HttpApi(
        store,
        stats(store, log),
        log,
        metrics,
        {name: check(ok) for name, ok in (checks or {}).items()},
        write_token=write_token,
        max_videos=max_videos,
        openapi=openapi,
        parts=built,
        forgets=forgets,
        collections=collections(built) if collections else (),
        gzip_min_bytes=gzip_min_bytes,
        layers=layers(log, metrics) if layers else (),
    )
    return Service(api, store, log, metrics)


# --- reading replies -----------------------------------------------------------------------------


def document(reply: Reply) -> dict[str, object]:
    parsed: dict[str, object] = orjson.loads(reply.body)
    return parsed


def header(reply: Reply, name: str) -> str | None:
    return dict(reply.headers).get(name)


def assert_problem(reply: Reply, status: int) -> dict[str, object]:
    assert reply.status == status
    assert reply.content_type == PROBLEM_JSON
    body = document(reply)
    assert body["status"] == status
    assert {"type", "title", "detail"} <= body.keys()
    assert str(body["type"]).startswith("urn:influencer-stats:problem:")
    assert header(reply, "x-request-id")
    return body


async def assert_methods_answered(svc: Service, routes: Iterable[Route]) -> None:
    """Each route answers each of its methods (never a 405), and a 405 with ``allow`` to any other."""
    for route in routes:
        path = route.template.replace("{id}", "c")
        for method in ("GET", "HEAD", "PUT", "DELETE", "POST", "PATCH", "OPTIONS"):
            reply = await svc.request(method, path, Body.json({"videos": []}))
            if method in route.methods:
                assert reply.status != 405, (method, route.template)
            else:
                assert_problem(reply, 405)
                assert header(reply, "allow") == ", ".join(route.methods)


async def assert_head_like_get(svc: Service, routes: Iterable[Route]) -> None:
    """HEAD answers as GET does (status, type, header names) on each route of collection ``c``."""
    for route in routes:
        if "GET" not in route.methods:
            assert "HEAD" not in route.methods  # POST /collections/{id}/refresh
            continue
        assert "HEAD" in route.methods
        path = route.template.replace("{id}", "c")

        get, head = await svc.get(path), await svc.request("HEAD", path)

        assert (head.status, head.content_type) == (get.status, get.content_type), route.template
        assert [n for n, _ in head.headers] == [n for n, _ in get.headers]


#: 200 distinct ids: GET /collections/{id} answers about 3 KB of JSON (over the gzip threshold).
MANY = [f"v{n:010d}" for n in range(200)]


async def call(
    svc: Service,
    method: str,
    path: str,
    *,
    accept_encoding: str | None = None,
    origin: str | None = None,
    cors_method: str | None = None,
    if_none_match: str | None = None,
    body: Body | None = None,
) -> Reply:
    """``path`` routed as a hand-routed server routes it, the headers handed over."""
    route, collection_id = ROUTES.match_raw(path)
    assert route is not None
    incoming = Incoming(
        route,
        method,
        collection_id,
        read_body=body or Body([]),
        accept_encoding=accept_encoding,
        origin=origin,
        cors_method=cors_method,
        if_none_match=if_none_match,
    )
    return await svc.api.serve(incoming)


async def put_big(svc: Service) -> str:
    """A collection of ``MANY`` ids, and its path."""
    assert (await svc.put("big", {"videos": MANY})).status == 201
    return "/collections/big"


@dataclass
class AnsweringStats:
    """A ``CollectionStatsQuery`` that gives one scripted answer."""

    answer: Result[StatsAnswer, StatsError]

    async def stats(self, collection_id: CollectionId) -> Result[StatsAnswer, StatsError]:
        return self.answer

    async def invalidate(self, collection_id: CollectionId) -> None:
        pass
