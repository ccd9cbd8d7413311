"""Tracing (``--tracing otel``), end to end: the spans reach a real OTLP/HTTP receiver.

The service runs as its own process on each server, configured by the standard ``OTEL_*``
variables only (``OTEL_EXPORTER_OTLP_ENDPOINT`` at the receiver this test starts, which decodes
the exporter's protobufs with ``opentelemetry-proto``), against the YouTube double in its own
process, which records the ``traceparent`` of every ``videos.list`` call. A request sent with a
``traceparent`` comes back as one trace: the server span its child, the stats query under it,
the video fetch under that, one CLIENT span per ``videos.list`` call, and the call itself
carrying that span's ``traceparent``; its log lines carry the trace id. In process: the spans are
flushed when the API closes, a malformed ``traceparent`` starts a new trace, and without tracing
no traced layer is built at all.
"""

from __future__ import annotations

import io
import secrets
from pathlib import Path

import httpx
import orjson
import pytest
from returns.result import Success

from influencer_stats.bootstrap.edge import ROUTES
from influencer_stats.bootstrap.root import open_http_api
from influencer_stats.config.resolve import resolve
from influencer_stats.domain.models import CollectionId
from influencer_stats.http.api import HttpApi
from influencer_stats.http.incoming import Incoming
from influencer_stats.http.routes import STATS
from influencer_stats.logic.service import GetStats
from tests.declared_paths import redirected_paths
from tests.integration.tracing_support import (
    OTEL,
    SPANS_WITHIN_S,
    VIDEOS,
    log_lines,
    new_traceparent,
    one_span,
    receiver,
    service,
    wait_for_trace,
    youtube,
)
from tests.integration.youtube_clients_support import HTTP_TIMEOUT_S, YouTubeDouble
from tests.otlp_receiver import Receiver
from tests.support import (
    A_YOUTUBE_CLIENT,
    ONE_CLIENT_PER_LIBRARY,
    RunningService,
    running_service,
    wait_for,
)
from youtube_double import running_double

__all__ = ["receiver", "service", "youtube"]  # the fixtures this module's tests take (tracing_support's)


def test_a_request_with_a_traceparent_is_one_trace_down_to_the_videos_list_call_that_carries_it(
    service: RunningService, receiver: Receiver, youtube: tuple[str, YouTubeDouble]
) -> None:
    double = youtube[1]
    double.reset()
    collection = f"traced-{secrets.token_hex(4)}"
    put_parent, put_trace, _ = new_traceparent()
    traceparent, trace_id, caller_span = new_traceparent()
    with httpx.Client(base_url=service.url, timeout=HTTP_TIMEOUT_S) as http:
        saved = http.put(
            f"/collections/{collection}", json={"videos": VIDEOS}, headers={"traceparent": put_parent}
        )
        answer = http.get(f"/collections/{collection}/stats", headers={"traceparent": traceparent})
    assert saved.status_code == 201 and answer.status_code == 200, answer.text

    spans = wait_for_trace(
        receiver,
        trace_id,
        "GET /collections/{id}/stats",
        "stats.query",
        "videos.fetch",
        "youtube.videos.list",
    )
    request = one_span(spans, "GET /collections/{id}/stats")
    query, fetch, call = (one_span(spans, n) for n in ("stats.query", "videos.fetch", "youtube.videos.list"))
    assert (request.kind, request.parent_id) == ("server", caller_span)
    assert request.attributes == {
        "http.request.method": "GET",
        "http.route": "/collections/{id}/stats",
        "http.response.status_code": 200,
    }
    assert request.service == "influencer-stats-under-test"
    assert (query.parent_id, fetch.parent_id, call.parent_id) == (
        request.span_id,
        query.span_id,
        fetch.span_id,
    )
    assert query.attributes == {"collection.id": collection, "collection.videos": 2}
    assert fetch.attributes == {
        "videos.ids": 2,
        "youtube.calls": 1,
        "youtube.retries": 0,
        "videos.missing": 0,
    }
    assert call.kind == "client"
    assert call.attributes == {
        "youtube.ids": 2,
        "youtube.quota_units": 1,
        "youtube.attempt": 1,
        "youtube.found": 2,
    }
    # The call went out with the CLIENT span's context: the double saw the same trace.
    assert double.counters()["traceparents"] == [f"00-{trace_id}-{call.span_id}-01"]
    # The request's log lines carry its trace id.
    lines = [line for line in log_lines(service) if line.get("collection") == collection]
    traces = {line["event"]: line["trace_id"] for line in lines}
    assert traces.pop("collection.saved") == put_trace
    assert set(traces.values()) <= {trace_id}  # the stats request's own lines, if any (stats.computed)


@pytest.mark.parametrize("client", ONE_CLIENT_PER_LIBRARY)  # each library's hooks send traceparent
def test_a_retried_call_is_a_second_client_span_with_a_retry_event_on_each_http_library(
    receiver: Receiver, youtube: tuple[str, YouTubeDouble], tmp_path: Path, client: str
) -> None:
    double = youtube[1]
    double.reset()
    double.fault("server_error", count=1)  # the first call fails, its retry succeeds
    args = [
        "--profile",
        "demo",
        "--server",
        "granian",
        "--video-client",
        client,
        "--tracing",
        "otel",
    ]
    env = {"YOUTUBE_API_URL": youtube[0], "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, **OTEL}
    traceparent, trace_id, _ = new_traceparent()
    with (
        running_service(args, tmp_path / "service.log", env=env) as service,
        httpx.Client(base_url=service.url, timeout=HTTP_TIMEOUT_S) as http,
    ):
        # One video: one videos.list call on every client, batched or not, then its retry.
        assert http.put("/collections/retried", json={"videos": VIDEOS[:1]}).status_code == 201
        answer = http.get("/collections/retried/stats", headers={"traceparent": traceparent})
    assert answer.status_code == 200, answer.text

    def both_calls() -> bool:
        return len([s for s in receiver.trace(trace_id) if s.name == "youtube.videos.list"]) == 2

    assert wait_for(both_calls, SPANS_WITHIN_S)
    spans = wait_for_trace(receiver, trace_id, "videos.fetch")
    fetch = one_span(spans, "videos.fetch")
    calls = sorted(
        (s for s in spans if s.name == "youtube.videos.list"), key=lambda s: s.attributes["youtube.attempt"]
    )
    assert [(c.attributes["youtube.attempt"], c.events, c.status) for c in calls] == [
        (1, (), 2),  # error
        (2, ("retry",), 0),
    ]
    assert calls[0].attributes["error.type"] == "UpstreamUnavailable"
    assert {c.parent_id for c in calls} == {fetch.span_id}
    assert (fetch.attributes["youtube.calls"], fetch.attributes["youtube.retries"]) == (2, 1)
    assert double.counters()["traceparents"] == [f"00-{trace_id}-{c.span_id}-01" for c in calls]


def _environ(double_url: str, tmp_path: Path) -> dict[str, str]:
    return {"YOUTUBE_API_URL": double_url, **redirected_paths(tmp_path / "files")}


async def test_the_spans_are_flushed_when_the_api_closes_and_a_malformed_traceparent_starts_a_trace(
    receiver: Receiver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The SDK's own schedule (5 s): only the flush on close can have sent the spans by then.
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    collection = CollectionId(f"flushed-{secrets.token_hex(4)}")
    stdout = io.BytesIO()
    async with running_double() as double:
        settings = resolve(
            _environ(double.url, tmp_path), {"tracing": "otel", "video_client": A_YOUTUBE_CLIENT}
        )
        async with open_http_api(settings, stdout) as api:
            assert api.traced
            assert isinstance(await api.store.save(collection, tuple(VIDEOS)), Success)
            incoming = Incoming(ROUTES[STATS], "GET", collection, traceparent="00-not-a-trace-01")
            reply = await api.serve(incoming)
            assert reply.status == 200

    [query] = [
        s for s in receiver.spans() if s.name == "stats.query" and s.attributes["collection.id"] == collection
    ]
    [request] = [s for s in receiver.trace(query.trace_id) if s.kind == "server"]
    assert request.parent_id == ""  # a new trace: the malformed parent was ignored
    assert query.parent_id == request.span_id
    assert request.service == "influencer-stats"  # no OTEL_SERVICE_NAME: the service's own name


async def test_without_tracing_no_traced_layer_is_built(tmp_path: Path) -> None:
    stdout = io.BytesIO()
    collection = CollectionId("untraced")
    async with running_double() as double:
        settings = resolve(_environ(double.url, tmp_path), {"video_client": A_YOUTUBE_CLIENT})
        async with open_http_api(settings, stdout) as api:
            assert isinstance(await api.store.save(collection, tuple(VIDEOS)), Success)
            reply = await api.serve(
                Incoming(ROUTES[STATS], "GET", collection, traceparent=new_traceparent()[0])
            )

    assert settings.choices.one("tracing") == "none"
    assert reply.status == 200
    # What servers call is the plain path itself, not a wrapper of it; the stats query is the use case.
    assert not api.traced
    assert api.answer.__func__ is HttpApi._answer  # type: ignore[attr-defined]
    assert type(api.stats) is GetStats
    lines = [orjson.loads(line) for line in stdout.getvalue().splitlines()]
    assert lines and not any("trace_id" in line for line in lines)
