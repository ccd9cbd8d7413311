"""The access log, through ``HttpApi`` as a server calls it (issue 34); gzip and CORS:
``test_http_api_conventions``.

``tests/integration/test_conventions_http.py`` proves each server hands the headers over and
writes what these decide.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from influencer_stats.algebras import EventLog, Metrics
from influencer_stats.http.access_log import access_log_layer
from influencer_stats.http.incoming import Incoming
from influencer_stats.http.layers import Answer, EdgeLayer
from influencer_stats.http.problems import Reply
from tests.unit.http_api_support import call, header, put_big, service

#: The ``layers`` of a service with the access log on, as the slice builds them.
ACCESS_LOG: Callable[[EventLog, Metrics], Sequence[EdgeLayer]] = lambda log, _: [access_log_layer(log)]  # noqa: E731


# --- the access log ------------------------------------------------------------------------------


async def test_the_access_log_is_off_by_default() -> None:
    svc = service()

    await call(svc, "GET", "/healthz")

    assert svc.log.named("http.access") == []


async def test_the_access_log_has_one_line_per_request_with_its_id_route_status_and_duration() -> None:
    svc = service(layers=ACCESS_LOG, gzip_min_bytes=1024)
    path = await put_big(svc)

    reply = await call(svc, "GET", path, accept_encoding="gzip")
    missing = await call(svc, "GET", "/collections/nope/stats")

    lines = svc.log.named("http.access")
    assert len(lines) == 3  # the PUT, then the two GETs
    put, got, not_found = (line.fields for line in lines)
    assert put["method"] == "PUT" and put["status"] == 201
    assert got["request_id"] == header(reply, "x-request-id")
    assert got["method"] == "GET"
    assert got["route"] == "/collections/{id}"
    assert got["status"] == 200
    assert got["bytes"] == len(reply.body)  # as sent: compressed
    assert isinstance(got["duration_ms"], float) and got["duration_ms"] >= 0
    assert not_found["route"] == "/collections/{id}/stats"
    assert not_found["status"] == 404
    assert not_found["request_id"] == header(missing, "x-request-id")
    assert all(line.level == "info" for line in lines)


async def test_a_refusal_without_a_route_is_logged_too() -> None:
    svc = service(layers=ACCESS_LOG)

    reply = await svc.get("/nowhere", request_id="abc-123")

    (line,) = svc.log.named("http.access")
    assert line.fields["request_id"] == "abc-123" == header(reply, "x-request-id")
    assert (line.fields["route"], line.fields["status"]) == ("unmatched", 404)


async def test_it_is_outermost_and_logs_what_an_inner_layer_answered_itself() -> None:
    """A layer inside it may answer without the route (the cors slice's preflight): logged too."""

    def answers_itself(inner: Answer) -> Answer:
        async def answer(incoming: Incoming) -> tuple[Reply, str]:
            if incoming.method == "OPTIONS":
                return Reply(204, b""), "from-the-layer"
            return await inner(incoming)

        return answer

    svc = service(layers=lambda log, _: [access_log_layer(log), EdgeLayer(answers_itself)])

    await call(svc, "OPTIONS", "/collections/c")

    (line,) = svc.log.named("http.access")
    assert (line.fields["method"], line.fields["status"], line.fields["request_id"]) == (
        "OPTIONS",
        204,
        "from-the-layer",
    )
