"""The API's request handling, independent of any server framework.

Servers parse the route and read the body (with the size limit), then call
one method here and write the ``Reply`` it returns. Everything else (JSON,
validation, status codes, problem bodies) lives here or in ``problems``, so
every server behaves identically.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import Concatenate, ParamSpec

import msgspec
import orjson
from returns.result import Failure, Success

from influencer_stats.algebras import CollectionStatsQuery, CollectionStore, EventLog
from influencer_stats.interpreters.http import problems
from influencer_stats.interpreters.http.problems import JSON, Reply
from influencer_stats.logic.models import CacheInfo, CollectionStats, Created
from influencer_stats.logic.validation import parse_collection_body, parse_collection_id

MAX_BODY_BYTES = 1024 * 1024
_decode = msgspec.json.Decoder().decode
_P = ParamSpec("_P")
#: Readiness checks by dependency name, built by the composition root.
Checks = dict[str, Callable[[], Awaitable[bool]]]
_HEALTHY = Reply(200, b'{"status":"ok"}')
_NO_CONTENT = Reply(204, b"")


def _stats_body(stats: CollectionStats) -> bytes:
    return orjson.dumps(
        {
            "impressions": stats.impressions,
            "engagements": stats.engagements,
            "score": stats.score,
            "videos": stats.videos,
            "missing": stats.missing,
        }
    )


def _cache_headers(cache: CacheInfo) -> tuple[tuple[str, str], ...]:
    """RFC 9211 ``Cache-Status`` (ttl < 0 means stale) and RFC 9111 ``Age``."""
    if not cache.hit:
        return (("cache-status", "influencer-stats; fwd=miss; stored"),)
    status = f"influencer-stats; hit; ttl={int(cache.ttl_s)}"
    if cache.stale_reason is not None:
        status += f"; detail={cache.stale_reason}"
    return (("cache-status", status), ("age", str(int(cache.age_s))))


def _guarded(
    handler: Callable[Concatenate[HttpApi, _P], Awaitable[Reply]],
) -> Callable[Concatenate[HttpApi, _P], Awaitable[Reply]]:
    """Turn a bug into a logged 500 problem instead of a stack trace on the wire."""

    @functools.wraps(handler)
    async def guarded(self: HttpApi, /, *args: _P.args, **kwargs: _P.kwargs) -> Reply:
        try:
            return await handler(self, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the edge is where bugs stop
            self.log.error("http.unhandled_error", handler=handler.__name__, error=repr(exc)[:500])
            return problems.internal_error()

    return guarded


class HttpApi:
    """The service's HTTP behaviour, built from the algebras it needs."""

    max_body_bytes = MAX_BODY_BYTES

    def __init__(
        self,
        store: CollectionStore,
        stats: CollectionStatsQuery,
        log: EventLog,
        checks: Mapping[str, Callable[[], Awaitable[bool]]] | None = None,
    ) -> None:
        self.store = store
        self.stats = stats
        self.log = log
        self.checks = dict(checks or {})

    def health(self) -> Reply:
        """Liveness: the process answers. Never touches a dependency."""
        return _HEALTHY

    @_guarded
    async def ready(self) -> Reply:
        """Readiness: every dependency of this profile answers."""
        results = {name: await check() for name, check in self.checks.items()}
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

    @_guarded
    async def list_collections(self) -> Reply:
        match await self.store.ids():
            case Success(ids):
                return Reply(200, orjson.dumps({"ids": ids}))
            case Failure(error):
                return problems.for_error(error)
        raise AssertionError("unreachable")

    @_guarded
    async def get_collection(self, raw_id: str) -> Reply:
        match parse_collection_id(raw_id):
            case Failure(invalid):
                return problems.invalid_input(invalid)
            case Success(collection_id):
                pass
        match await self.store.get(collection_id):
            case Success(collection):
                return Reply(200, orjson.dumps({"videos": collection.videos}))
            case Failure(error):
                return problems.for_error(error)
        raise AssertionError("unreachable")

    @_guarded
    async def put_collection(self, raw_id: str, body: bytes) -> Reply:
        match parse_collection_id(raw_id):
            case Failure(invalid):
                return problems.invalid_input(invalid)
            case Success(collection_id):
                pass
        try:
            document = _decode(body)
        except msgspec.DecodeError as exc:
            return problems.malformed_json(f"the body is not valid JSON: {exc}")
        match parse_collection_body(document):
            case Failure(invalid):
                return problems.invalid_input(invalid)
            case Success(videos):
                pass
        match await self.store.save(collection_id, videos):
            case Failure(error):
                return problems.for_error(error)
            case Success(outcome):
                created = isinstance(outcome, Created)
        self.log.info("collection.saved", collection=collection_id, videos=len(videos), created=created)
        body_out = orjson.dumps({"videos": videos})
        if created:
            return Reply(201, body_out, JSON, (("location", f"/collections/{collection_id}"),))
        return Reply(200, body_out)

    @_guarded
    async def delete_collection(self, raw_id: str) -> Reply:
        match parse_collection_id(raw_id):
            case Failure(invalid):
                return problems.invalid_input(invalid)
            case Success(collection_id):
                pass
        match await self.store.delete(collection_id):
            case Failure(error):
                return problems.for_error(error)
            case Success(_):
                self.log.info("collection.deleted", collection=collection_id)
                return _NO_CONTENT
        raise AssertionError("unreachable")

    @_guarded
    async def collection_stats(self, raw_id: str) -> Reply:
        match parse_collection_id(raw_id):
            case Failure(invalid):
                return problems.invalid_input(invalid)
            case Success(collection_id):
                pass
        match await self.stats.stats(collection_id):
            case Success(answer):
                if answer.cache is None:
                    return Reply(200, _stats_body(answer.stats))
                return Reply(200, _stats_body(answer.stats), JSON, _cache_headers(answer.cache))
            case Failure(error):
                return problems.for_error(error)
        raise AssertionError("unreachable")
