"""Redis commands are spans of the request that sent them (the joint ``redis__tracing``).

With ``--tracing otel``, the shared Redis client is traced (``Tracing.redis``): each command a
request sends is a CLIENT span under that request's trace, and a command outside any request (a
readiness PING) is no span at all. The store here is the ``redis`` slice's own; a stats cache
and a video cache in Redis join when their slices are installed (their decisions are spans too).
"""

from __future__ import annotations

import io
import secrets
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from returns.result import Success

from influencer_stats.bootstrap.edge import ROUTES
from influencer_stats.bootstrap.root import open_http_api
from influencer_stats.bootstrap.stats import STATS_WRAPPERS
from influencer_stats.bootstrap.videos import VIDEO_CACHES
from influencer_stats.config.resolve import resolve
from influencer_stats.domain.models import CollectionId
from influencer_stats.http.incoming import Incoming
from influencer_stats.http.routes import STATS
from tests.declared_paths import redirected_paths
from tests.integration.tracing_support import OTEL, VIDEOS, new_traceparent, one_span, wait_for_trace
from tests.integration.youtube_clients_support import HTTP_TIMEOUT_S
from tests.otlp_receiver import Receiver, running_receiver
from tests.shared_redis import shared_redis_url, unique_prefix
from tests.support import A_YOUTUBE_CLIENT, running_double_process, running_service
from youtube_double import running_double

#: The wrappers in Redis that installed slices register: a stats cache, a video cache (or none).
STATS_CACHE = next((entry.name for entry in STATS_WRAPPERS if "redis" in entry.needs), None)
VIDEO_CACHE = next((entry.name for entry in VIDEO_CACHES if "redis" in entry.needs), None)


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with running_receiver() as running:
        yield running


def _redis_env() -> dict[str, str]:
    return {"REDIS_URL": shared_redis_url(), "INFLUENCER_STATS_REDIS_PREFIX": unique_prefix()}


def test_cache_decisions_and_redis_commands_are_spans_of_the_request(
    receiver: Receiver, tmp_path: Path
) -> None:
    args = ["--profile", "demo", "--server", "starlette", "--video-client", A_YOUTUBE_CLIENT]
    args += ["--store", "redis", "--tracing", "otel"]
    args += ["--cache", STATS_CACHE] if STATS_CACHE else []
    args += ["--video-cache", VIDEO_CACHE] if VIDEO_CACHE else []
    (first, first_trace, _), (second, second_trace, _) = new_traceparent(), new_traceparent()
    with running_double_process(tmp_path / "double.log") as youtube:
        env = {"YOUTUBE_API_URL": youtube, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, **OTEL}
        with running_service(args, tmp_path / "service.log", env={**env, **_redis_env()}) as service:
            with httpx.Client(base_url=service.url, timeout=HTTP_TIMEOUT_S) as http:
                assert http.put("/collections/cached", json={"videos": VIDEOS}).status_code == 201
                missed = http.get("/collections/cached/stats", headers={"traceparent": first})
                again = http.get("/collections/cached/stats", headers={"traceparent": second})
            assert (missed.status_code, again.status_code) == (200, 200)

            computed = wait_for_trace(
                receiver, first_trace, "stats.query", "videos.fetch", "youtube.videos.list"
            )
            answered = wait_for_trace(receiver, second_trace, "stats.query")

    if STATS_CACHE:  # the second answer is the stats cache's: no fetch under it
        assert "; hit; " in again.headers["cache-status"]
        assert one_span(computed, "stats.query").attributes["cache.result"] == "miss"
        assert one_span(answered, "stats.query").attributes["cache.result"] == "hit"
        assert one_span(answered, "stats.query").attributes["cache.age_s"] >= 0
        assert "videos.fetch" not in {span.name for span in answered}
    if VIDEO_CACHE:
        assert one_span(computed, "videos.fetch").attributes["cache.result"] == "miss"
    for trace in (computed, answered):  # the store's reads at least, under the request
        redis = [span for span in trace if span.name.startswith("redis ")]
        assert redis, [span.name for span in trace]
        ids = {span.span_id for span in trace}
        assert all(span.kind == "client" and span.parent_id in ids for span in redis)
        assert all(span.attributes["db.system.name"] == "redis" for span in redis)


async def test_redis_commands_are_spans_only_within_a_trace(
    receiver: Receiver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    traceparent, trace_id, _ = new_traceparent()
    collection = CollectionId(f"redis-{secrets.token_hex(4)}")
    async with running_double() as double:
        environ = {"YOUTUBE_API_URL": double.url, **redirected_paths(tmp_path / "files"), **_redis_env()}
        settings = resolve(environ, {"tracing": "otel", "store": "redis"})
        async with open_http_api(settings, io.BytesIO()) as api:
            assert await api.checks["redis"]()  # a readiness PING, outside any request
            assert isinstance(await api.store.save(collection, tuple(VIDEOS)), Success)
            reply = await api.serve(Incoming(ROUTES[STATS], "GET", collection, traceparent=traceparent))
            assert reply.status == 200

    assert "redis PING" not in {span.name for span in receiver.spans()}
    assert any(span.name.startswith("redis ") for span in receiver.trace(trace_id))
