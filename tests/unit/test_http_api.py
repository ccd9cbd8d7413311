"""The HTTP edge in process: every route, error and header the README documents.

No socket and no framework: a request goes through the route table as the
hand-routed servers send it (``ROUTES.match``, then ``HttpApi.serve``, or
``refuse`` when no template matches), its body through ``read_bounded`` as every
server streams it. ``tests/integration/test_api.py`` proves each server adapter
speaks HTTP the same way over a real socket.
"""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass

import orjson
import pytest
from returns.result import Failure, Result, Success

from influencer_stats.algebras import CollectionStatsQuery, CollectionStore, EventLog
from influencer_stats.algebras.event_log import LOG_CONTEXT
from influencer_stats.http import problems
from influencer_stats.http.api import MAX_BODY_BYTES, HttpApi, Incoming
from influencer_stats.http.body import read_bounded
from influencer_stats.http.openapi import openapi_document
from influencer_stats.http.problems import PROBLEM_JSON, Reply
from influencer_stats.http.routes import COLLECTION, ROUTES, STATS
from influencer_stats.interpreters.collections.memory_dict import DictCollectionStore
from influencer_stats.interpreters.metrics.noop import NoMetrics
from influencer_stats.interpreters.stats.computed import ComputedStats
from influencer_stats.interpreters.videos.fake import FakeVideoStatsSource
from influencer_stats.interpreters.videos.synthetic import synthetic_stats, synthetic_video_id
from influencer_stats.logic.models import (
    CacheInfo,
    Collection,
    CollectionId,
    CollectionNotFound,
    CollectionStats,
    InvalidUpstreamData,
    QuotaExceeded,
    SaveOutcome,
    StatsAnswer,
    StatsError,
    StoreUnavailable,
    UpstreamMisconfigured,
    UpstreamTimeout,
    UpstreamUnavailable,
    VideoId,
)
from influencer_stats.logic.validation import DEFAULT_MAX_VIDEOS
from influencer_stats.testing.event_log import CapturingEventLog

ORIGINAL_ID = "99757a95-f758-499f-a170-bea93b2d8bcf"
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


class DownStore:
    """A ``CollectionStore`` whose server is down."""

    async def get(
        self, collection_id: CollectionId
    ) -> Result[Collection, CollectionNotFound | StoreUnavailable]:
        return Failure(StoreUnavailable("store down"))

    async def save(
        self, collection_id: CollectionId, videos: tuple[VideoId, ...]
    ) -> Result[SaveOutcome, StoreUnavailable]:
        return Failure(StoreUnavailable("store down"))

    async def delete(
        self, collection_id: CollectionId
    ) -> Result[None, CollectionNotFound | StoreUnavailable]:
        return Failure(StoreUnavailable("store down"))

    async def ids(self) -> Result[tuple[CollectionId, ...], StoreUnavailable]:
        return Failure(StoreUnavailable("store down"))


class BuggyStore(DictCollectionStore):
    """A store with a bug: reading raises."""

    async def get(
        self, collection_id: CollectionId
    ) -> Result[Collection, CollectionNotFound | StoreUnavailable]:
        raise RuntimeError("secret internals /etc/passwd")


@dataclass
class AnsweringStats:
    """A ``CollectionStatsQuery`` that gives one scripted answer."""

    answer: Result[StatsAnswer, StatsError]

    async def stats(self, collection_id: CollectionId) -> Result[StatsAnswer, StatsError]:
        return self.answer

    async def invalidate(self, collection_id: CollectionId) -> None:
        pass


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
    ) -> Reply:
        route, collection_id = ROUTES.match(path)
        if route is None:
            return self.api.refuse(problems.route_not_found(path), "unmatched", method, request_id)
        incoming = Incoming(route, method, collection_id, request_id, authorization, body or Body([]))
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

    async def get(self, path: str, *, request_id: str | None = None) -> Reply:
        return await self.request("GET", path, request_id=request_id)


def _computed(store: CollectionStore, log: EventLog) -> CollectionStatsQuery:
    return ComputedStats(store, FakeVideoStatsSource(), log)


def service(
    *,
    write_token: str | None = None,
    max_videos: int = DEFAULT_MAX_VIDEOS,
    store: CollectionStore | None = None,
    stats: Callable[[CollectionStore, EventLog], CollectionStatsQuery] = _computed,
    checks: Mapping[str, bool] | None = None,
) -> Service:
    """The API on a dict store and computed stats over the fake source, unless told otherwise."""
    store = store or DictCollectionStore()
    log = ContextLog()
    metrics = RecordingMetrics()

    def check(ok: bool) -> Callable[[], Awaitable[bool]]:
        async def answer() -> bool:
            return ok

        return answer

    api = HttpApi(
        store,
        stats(store, log),
        log,
        metrics,
        {name: check(ok) for name, ok in (checks or {}).items()},
        write_token=write_token,
        max_videos=max_videos,
        openapi=OPENAPI,
    )
    return Service(api, store, log, metrics)


@pytest.fixture
def svc() -> Service:
    return service()


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


def expected_totals(videos: list[str]) -> dict[str, int]:
    stats = [synthetic_stats(VideoId(v)) for v in dict.fromkeys(videos) if not v.startswith("X")]
    engagements = sum(s.likes + s.comments + s.dislikes for s in stats)
    return {
        "impressions": sum(s.views for s in stats),
        "engagements": engagements,
        "score": engagements + sum(s.likes for s in stats),
    }


# --- routes and their answers --------------------------------------------------------------------


async def test_the_original_readme_flow_gives_non_zero_stats(svc: Service) -> None:
    put = await svc.put(ORIGINAL_ID, {"videos": ORIGINAL_VIDEOS})
    stats = await svc.get(f"/collections/{ORIGINAL_ID}/stats")

    assert put.status == 201
    assert (stats.status, stats.content_type) == (200, "application/json")
    body = document(stats)
    assert body == {**expected_totals(ORIGINAL_VIDEOS), "videos": 3, "missing": []}
    assert header(stats, "cache-status") is None  # no cache, no Cache-Status


async def test_put_creates_then_replaces_and_get_returns_the_videos(svc: Service) -> None:
    created = await svc.put("c1", {"videos": ORIGINAL_VIDEOS})
    replaced = await svc.put("c1", {"videos": ORIGINAL_VIDEOS[:1]})

    assert (created.status, document(created)) == (201, {"videos": ORIGINAL_VIDEOS})
    assert header(created, "location") == "/collections/c1"
    assert (replaced.status, document(replaced)) == (200, {"videos": ORIGINAL_VIDEOS[:1]})
    assert header(replaced, "location") is None
    assert document(await svc.get("/collections/c1")) == {"videos": ORIGINAL_VIDEOS[:1]}
    assert [(e.event, e.fields["created"]) for e in svc.log.named("collection.saved")] == [
        ("collection.saved", True),
        ("collection.saved", False),
    ]


async def test_stats_follow_a_replacement_immediately(svc: Service) -> None:
    await svc.put("c", {"videos": ORIGINAL_VIDEOS})
    await svc.get("/collections/c/stats")

    await svc.put("c", {"videos": ORIGINAL_VIDEOS[:1]})

    assert document(await svc.get("/collections/c/stats"))["videos"] == 1


async def test_duplicates_count_once_and_unknown_videos_are_listed_missing(svc: Service) -> None:
    videos = [ORIGINAL_VIDEOS[0], ORIGINAL_VIDEOS[0], "XdeletedVid"]
    await svc.put("c", {"videos": videos})

    body = document(await svc.get("/collections/c/stats"))

    assert body == {**expected_totals(videos), "videos": 1, "missing": ["XdeletedVid"]}


async def test_a_121_video_collection_is_summed_exactly(svc: Service) -> None:
    videos = [synthetic_video_id(n) for n in range(120)] + ["X0000000001"]
    await svc.put("c", {"videos": videos})

    body = document(await svc.get("/collections/c/stats"))

    assert body == {**expected_totals(videos), "videos": 120, "missing": ["X0000000001"]}


async def test_an_empty_collection_has_zero_stats(svc: Service) -> None:
    await svc.put("c", {"videos": []})

    assert document(await svc.get("/collections/c/stats")) == {
        "impressions": 0,
        "engagements": 0,
        "score": 0,
        "videos": 0,
        "missing": [],
    }


async def test_delete_removes_and_then_everything_is_404(svc: Service) -> None:
    await svc.put("c", {"videos": ORIGINAL_VIDEOS})

    deleted = await svc.request("DELETE", "/collections/c")

    assert (deleted.status, deleted.body) == (204, b"")
    assert svc.log.named("collection.deleted")[0].fields["collection"] == "c"
    assert_problem(await svc.get("/collections/c"), 404)
    assert_problem(await svc.get("/collections/c/stats"), 404)
    assert_problem(await svc.request("DELETE", "/collections/c"), 404)


async def test_the_list_of_collections_contains_the_saved_ids_sorted(svc: Service) -> None:
    for cid in ("b", "c", "a"):
        await svc.put(cid, {"videos": []})

    assert document(await svc.get("/collections")) == {"ids": ["a", "b", "c"]}


async def test_health_is_ok(svc: Service) -> None:
    reply = await svc.get("/healthz")

    assert (reply.status, document(reply)) == (200, {"status": "ok"})


async def test_the_openapi_route_serves_the_document_it_was_given(svc: Service) -> None:
    reply = await svc.get("/openapi.json")

    assert (reply.status, reply.content_type, reply.body) == (200, "application/json", OPENAPI)


async def test_every_route_answers_each_of_its_methods_and_only_those(svc: Service) -> None:
    for template, route in ROUTES.items():
        path = template.replace("{id}", "c")
        for method in ("GET", "HEAD", "PUT", "DELETE", "POST", "PATCH", "OPTIONS"):
            reply = await svc.request(method, path, Body.json({"videos": []}))
            if method in route.methods:
                assert reply.status != 405, (method, template)
            else:
                assert_problem(reply, 405)
                assert header(reply, "allow") == ", ".join(route.methods)


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("POST", "/collections/c", "DELETE, GET, HEAD, PUT"),
        ("PUT", "/collections/c/stats", "GET, HEAD"),
        ("DELETE", "/healthz", "GET, HEAD"),
        ("QUERY", "/collections", "GET, HEAD"),
    ],
)
async def test_a_wrong_method_is_a_405_problem_with_allow(
    svc: Service, method: str, path: str, allow: str
) -> None:
    reply = await svc.request(method, path, Body.json({"videos": []}))

    body = assert_problem(reply, 405)
    assert header(reply, "allow") == allow
    assert method in str(body["detail"])
    assert await svc.store.ids() == Success(())  # a refused PUT-shaped request wrote nothing


async def test_head_answers_like_get_on_every_get_route(svc: Service) -> None:
    await svc.put("c", {"videos": ORIGINAL_VIDEOS})
    for template, route in ROUTES.items():
        assert "HEAD" in route.methods
        path = template.replace("{id}", "c")

        get, head = await svc.get(path), await svc.request("HEAD", path)

        assert (head.status, head.content_type) == (get.status, get.content_type), template
        assert [n for n, _ in head.headers] == [n for n, _ in get.headers]
    assert_problem(await svc.request("HEAD", "/collections/never/stats"), 404)


async def test_an_unknown_route_is_a_404_problem_counted_as_unmatched(svc: Service) -> None:
    reply = await svc.get("/nope", request_id="abc")

    body = assert_problem(reply, 404)
    assert body["type"] == "urn:influencer-stats:problem:route-not-found"
    assert "/nope" in str(body["detail"])
    assert header(reply, "x-request-id") == "abc"
    assert svc.metrics.requests == [("unmatched", "GET", 404)]


# --- validation ----------------------------------------------------------------------------------


async def test_unknown_collection_is_a_404_problem_naming_it(svc: Service) -> None:
    body = assert_problem(await svc.get("/collections/never-saved/stats"), 404)

    assert body["type"] == "urn:influencer-stats:problem:collection-not-found"
    assert "never-saved" in str(body["detail"])


async def test_malformed_json_is_a_400_problem(svc: Service) -> None:
    reply = await svc.request("PUT", "/collections/c", Body([b'{"videos": [']))

    body = assert_problem(reply, 400)
    assert body["type"] == "urn:influencer-stats:problem:malformed-json"
    assert await svc.store.ids() == Success(())


@pytest.mark.parametrize(
    ("body", "field", "value"),
    [
        ({"videos": ["short"]}, "videos[0]", "short"),
        ({"videos": ["-4lB5EKS5Uk", 7]}, "videos[1]", 7),
        ({"videos": "-4lB5EKS5Uk"}, "videos", "-4lB5EKS5Uk"),
        ({"vids": []}, "vids", "[]"),
        ({}, "videos", None),
        ([], "body", "[]"),
        ({"videos": ["-4lB5EKS5Uk"] * 5_001}, "videos", 5_001),
    ],
)
async def test_a_wrong_body_is_a_422_problem_naming_the_field_and_value(
    svc: Service, body: object, field: str, value: object
) -> None:
    problem = assert_problem(await svc.put("c", body), 422)

    assert problem["type"] == "urn:influencer-stats:problem:validation-error"
    assert (problem["field"], problem["value"]) == (field, value)
    assert_problem(await svc.get("/collections/c"), 404)  # nothing was written


async def test_the_operators_video_limit_is_the_one_enforced() -> None:
    limited = service(max_videos=7)
    ids = [f"{n:011d}" for n in range(8)]

    at_limit = await limited.put("c", {"videos": ids[:7]})
    over = await limited.put("c", {"videos": ids})

    assert at_limit.status == 201
    assert (assert_problem(over, 422)["field"], document(over)["value"]) == ("videos", 8)
    assert document(await limited.get("/collections/c")) == {"videos": ids[:7]}


@pytest.mark.parametrize("bad", ["a" * 65, "bad id", "semi;colon", "é", "{x}"])
@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
async def test_a_bad_collection_id_is_a_422_problem_on_every_method(
    svc: Service, bad: str, method: str
) -> None:
    reply = await svc.request(method, f"/collections/{bad}", Body.json({"videos": []}))

    problem = assert_problem(reply, 422)
    assert problem["field"] == "id"
    assert problem["value"] == bad
    assert assert_problem(await svc.get(f"/collections/{bad}/stats"), 422)["field"] == "id"


# --- bodies: bounded, streamed ------------------------------------------------------------------


async def test_a_body_declared_over_one_mebibyte_is_a_413_problem_before_a_chunk_is_read(
    svc: Service,
) -> None:
    body = Body([b" " * 1024] * 2000, declared=MAX_BODY_BYTES + 1)

    reply = await svc.request("PUT", "/collections/c", body)

    problem = assert_problem(reply, 413)
    assert problem["type"] == "urn:influencer-stats:problem:body-too-large"
    assert str(MAX_BODY_BYTES) in str(problem["detail"])
    assert body.read == 0


async def test_a_large_chunked_body_is_refused_at_the_chunk_that_passes_the_limit(svc: Service) -> None:
    body = Body([b" " * 65_536] * 40)  # 2.5 MiB, no Content-Length

    reply = await svc.request("PUT", "/collections/c", body)

    assert_problem(reply, 413)
    assert body.read == 17  # 16 chunks are exactly 1 MiB: the 17th passes it, nothing after is read


async def test_a_body_of_exactly_one_mebibyte_is_read_and_parsed(svc: Service) -> None:
    padding = b" " * (MAX_BODY_BYTES - len(b'{"videos":[]}'))

    reply = await svc.request("PUT", "/collections/c", Body([b'{"videos":[]}', padding]))

    assert reply.status == 201


async def test_a_body_sent_in_many_chunks_is_reassembled(svc: Service) -> None:
    data = orjson.dumps({"videos": ORIGINAL_VIDEOS})

    reply = await svc.request(
        "PUT", "/collections/c", Body([data[i : i + 3] for i in range(0, len(data), 3)])
    )

    assert (reply.status, document(reply)) == (201, {"videos": ORIGINAL_VIDEOS})


async def test_a_refused_write_never_reads_its_body() -> None:
    guarded = service(write_token=TOKEN)
    body = Body.json({"videos": []})

    await guarded.request("PUT", "/collections/c", body)
    await guarded.request("POST", "/collections/c", body)

    assert body.read == 0


# --- write auth ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "authorization", [None, "", "Bearer wrong", TOKEN, f"Basic {TOKEN}", f"Bearer {TOKEN}x"]
)
@pytest.mark.parametrize("method", ["PUT", "DELETE"])
async def test_writes_without_the_token_are_401_with_www_authenticate(
    authorization: str | None, method: str
) -> None:
    guarded = service(write_token=TOKEN)
    await guarded.store.save(CollectionId("locked"), (VideoId(ORIGINAL_VIDEOS[0]),))

    reply = await guarded.request(
        method, "/collections/locked", Body.json({"videos": []}), authorization=authorization
    )

    body = assert_problem(reply, 401)
    assert body["type"] == "urn:influencer-stats:problem:unauthorized"
    assert header(reply, "www-authenticate") == 'Bearer realm="influencer-stats"'
    assert document(await guarded.get("/collections/locked")) == {"videos": ORIGINAL_VIDEOS[:1]}  # untouched


@pytest.mark.parametrize("authorization", [f"Bearer {TOKEN}", f"bearer {TOKEN}", f"BEARER  {TOKEN} "])
async def test_writes_with_the_token_succeed_and_reads_need_none(authorization: str) -> None:
    guarded = service(write_token=TOKEN)

    put = await guarded.put("open", {"videos": ORIGINAL_VIDEOS}, authorization=authorization)
    reads = [
        await guarded.get(path) for path in ("/collections/open", "/collections/open/stats", "/collections")
    ]
    delete = await guarded.request("DELETE", "/collections/open", authorization=authorization)

    assert (put.status, delete.status) == (201, 204)
    assert [r.status for r in reads] == [200, 200, 200]


async def test_without_a_write_token_writes_are_open(svc: Service) -> None:
    assert (await svc.put("c", {"videos": []}, authorization="Bearer anything")).status == 201
    assert (await svc.request("DELETE", "/collections/c")).status == 204


@pytest.mark.parametrize(
    "credentials", ["", "w", TOKEN[:-1], TOKEN[:-1] + "X", TOKEN + "x", "y" * 500, TOKEN]
)
async def test_every_bearer_credential_is_compared_in_constant_time(
    credentials: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    compared: list[tuple[bytes, bytes]] = []
    original = hmac.compare_digest

    def compare_digest(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return original(a, b)

    monkeypatch.setattr(hmac, "compare_digest", compare_digest)  # the module the edge calls
    guarded = service(write_token=TOKEN)

    reply = await guarded.put("c", {"videos": []}, authorization=f"Bearer {credentials}")

    assert compared == [(credentials.encode(), TOKEN.encode())]  # whatever its length or prefix
    assert reply.status == (201 if credentials == TOKEN else 401)


# --- request ids ---------------------------------------------------------------------------------


async def test_a_valid_request_id_is_echoed_and_bound_to_every_log_line_of_the_request(svc: Service) -> None:
    reply = await svc.put("traced", {"videos": ORIGINAL_VIDEOS}, request_id="req-1.a:b_c")

    assert header(reply, "x-request-id") == "req-1.a:b_c"
    assert [(e.event, e.fields["request_id"]) for e in svc.log.events] == [
        ("collection.saved", "req-1.a:b_c")
    ]
    assert LOG_CONTEXT.get() == {}  # unbound once answered


@pytest.mark.parametrize("sent", [None, "", "x" * 129, "has space", "new\nline", "ünï"])
async def test_a_missing_or_invalid_request_id_is_replaced_by_a_new_one(
    svc: Service, sent: str | None
) -> None:
    first = header(await svc.get("/healthz", request_id=sent), "x-request-id")
    second = header(await svc.get("/nope", request_id=sent), "x-request-id")

    for replaced in (first, second):
        assert replaced is not None and len(replaced) == 16
        int(replaced, 16)
    assert first != second


async def test_every_reply_carries_exactly_one_request_id(svc: Service) -> None:
    for reply in (
        await svc.get("/healthz"),
        await svc.get("/collections/nope"),
        await svc.request("POST", "/healthz"),
        await svc.get("/nope"),
    ):
        assert [name for name, _ in reply.headers].count("x-request-id") == 1


# --- problems ------------------------------------------------------------------------------------


async def test_a_bug_is_a_logged_500_problem_that_leaks_nothing() -> None:
    buggy = service(store=BuggyStore())

    reply = await buggy.get("/collections/c", request_id="bug-1")

    body = assert_problem(reply, 500)
    assert body["type"] == "urn:influencer-stats:problem:internal-error"
    assert b"secret" not in reply.body and b"Traceback" not in reply.body
    assert header(reply, "x-request-id") == "bug-1"
    [logged] = buggy.log.named("http.unhandled_error")
    assert logged.level == "error"
    assert logged.fields["route"] == COLLECTION and logged.fields["request_id"] == "bug-1"
    assert "RuntimeError" in str(logged.fields["error"])
    assert buggy.metrics.requests == [(COLLECTION, "GET", 500)]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/collections"),
        ("GET", "/collections/c"),
        ("PUT", "/collections/c"),
        ("DELETE", "/collections/c"),
        ("GET", "/collections/c/stats"),
    ],
)
async def test_a_store_that_is_down_is_a_503_problem_with_retry_after(method: str, path: str) -> None:
    down = service(store=DownStore())

    reply = await down.request(method, path, Body.json({"videos": []}))

    body = assert_problem(reply, 503)
    assert body["type"] == "urn:influencer-stats:problem:store-unavailable"
    assert header(reply, "retry-after") == "1"


@pytest.mark.parametrize(
    ("error", "status", "slug", "retry_after"),
    [
        (
            QuotaExceeded("YouTube answered 403 quotaExceeded", retry_after_s=3600),
            503,
            "upstream-quota-exceeded",
            "3600",
        ),
        (
            QuotaExceeded("YouTube answered 403 rateLimitExceeded", retry_after_s=60),
            503,
            "upstream-quota-exceeded",
            "60",
        ),
        (UpstreamMisconfigured("YouTube answered 400 keyInvalid"), 502, "upstream-misconfigured", None),
        (UpstreamUnavailable("YouTube answered 500 unknown"), 502, "upstream-unavailable", None),
        (InvalidUpstreamData("videos.list body does not parse"), 502, "upstream-invalid-response", None),
        (UpstreamTimeout("YouTube call timed out"), 504, "upstream-timeout", None),
        (CollectionNotFound(CollectionId("c")), 404, "collection-not-found", None),
    ],
)
async def test_each_stats_failure_is_one_problem(
    error: StatsError, status: int, slug: str, retry_after: str | None
) -> None:
    failing = service(stats=lambda _store, _log: AnsweringStats(Failure(error)))

    reply = await failing.get("/collections/c/stats")

    body = assert_problem(reply, status)
    assert body["type"] == f"urn:influencer-stats:problem:{slug}"
    assert header(reply, "retry-after") == retry_after


# --- stats caching headers -----------------------------------------------------------------------

_STATS = CollectionStats(18760776, 383586, 710585, 3, ())


@pytest.mark.parametrize(
    ("cache", "cache_status", "age"),
    [
        (CacheInfo(False, 0.0, 10.0), "influencer-stats; fwd=miss; stored", None),
        (CacheInfo(True, 2.6, 7.4), "influencer-stats; hit; ttl=7", "2"),
        (
            CacheInfo(True, 13.0, -3.0, "revalidating"),
            "influencer-stats; hit; ttl=-3; detail=revalidating",
            "13",
        ),
        (
            CacheInfo(True, 40.0, -30.0, "stale-if-error"),
            "influencer-stats; hit; ttl=-30; detail=stale-if-error",
            "40",
        ),
    ],
)
async def test_a_cached_answer_carries_cache_status_and_age(
    cache: CacheInfo, cache_status: str, age: str | None
) -> None:
    cached = service(stats=lambda _store, _log: AnsweringStats(Success(StatsAnswer(_STATS, cache))))

    reply = await cached.get("/collections/c/stats")

    assert reply.status == 200
    assert (header(reply, "cache-status"), header(reply, "age")) == (cache_status, age)
    assert document(reply) == {
        "impressions": 18760776,
        "engagements": 383586,
        "score": 710585,
        "videos": 3,
        "missing": [],
    }


# --- readiness and metrics -----------------------------------------------------------------------


async def test_readiness_is_200_when_every_dependency_answers() -> None:
    ready = service(checks={"sqlite": True, "redis": True})

    reply = await ready.get("/readyz")

    assert (reply.status, document(reply)) == (
        200,
        {"status": "ready", "checks": {"sqlite": "ok", "redis": "ok"}},
    )


async def test_readiness_is_a_503_problem_naming_the_dependency_that_is_down() -> None:
    degraded = service(checks={"sqlite": True, "redis": False})

    reply = await degraded.get("/readyz")

    body = assert_problem(reply, 503)
    assert body["type"] == "urn:influencer-stats:problem:not-ready"
    assert "redis" in str(body["detail"]) and "sqlite" not in str(body["detail"])
    assert body["checks"] == {"sqlite": "ok", "redis": "failing"}
    assert header(reply, "retry-after") == "1"
    assert (await degraded.get("/healthz")).status == 200  # liveness is not readiness


async def test_every_request_is_counted_by_route_template_method_and_status(svc: Service) -> None:
    await svc.put("c", {"videos": ORIGINAL_VIDEOS})
    for _ in range(3):
        await svc.get("/collections/c/stats")
    await svc.get("/collections/nope/stats")
    await svc.request("POST", "/collections/c")
    await svc.get("/no/such/route")

    assert svc.metrics.requests == [
        (COLLECTION, "PUT", 201),
        *[(STATS, "GET", 200)] * 3,
        (STATS, "GET", 404),
        (COLLECTION, "POST", 405),
        ("unmatched", "GET", 404),
    ]


async def test_the_metrics_route_serves_what_the_metrics_render(svc: Service) -> None:
    reply = await svc.get("/metrics")

    assert (reply.status, reply.body) == (200, b"requests_total 1\n")
    assert reply.content_type == "text/plain; version=0.0.4; charset=utf-8"


def test_the_served_openapi_document_is_the_one_built_from_the_route_table() -> None:
    paths = orjson.loads(openapi_document(DEFAULT_MAX_VIDEOS))["paths"]

    assert list(paths) == list(ROUTES)
    for template, route in ROUTES.items():
        assert {m.upper() for m in paths[template] if m != "parameters"} == set(route.methods)
