"""The HTTP edge in process: every 5xx answer and every refused write is a ``request.failed``
warning, with the request's id; a successful request, a read that finds nothing and a bug's
500 (which has its own ``http.unhandled_error``) add none.

Before: nothing was logged for a 401, a refused write or a store's 503 (80 failed writes in a
Sentinel test, not one log line).
"""

from __future__ import annotations

from tests.unit.http_api_support import ORIGINAL_VIDEOS, TOKEN, Body, Service, service
from tests.unit.test_http_api_auth import BuggyStore
from tests.unit.test_http_api_collections import DownStore

PROBLEM = "urn:influencer-stats:problem:"


def failed(svc: Service) -> list[dict[str, object]]:
    """The ``request.failed`` events' fields, each checked to be a warning."""
    events = svc.log.named("request.failed")
    assert all(event.level == "warning" for event in events)
    return [event.fields for event in events]


async def test_a_store_503_is_logged_as_a_warning_naming_what_failed_with_the_request_id() -> None:
    svc = service(store=DownStore())

    put = await svc.put("c1", {"videos": ORIGINAL_VIDEOS}, request_id="put-1")
    get = await svc.get("/collections/c1", request_id="get-1")

    assert (put.status, get.status) == (503, 503)
    assert failed(svc) == [
        {
            "request_id": "put-1",
            "status": 503,
            "problem": PROBLEM + "store-unavailable",
            "route": "/collections/{id}",
            "method": "PUT",
            "detail": "store down",
        },
        {
            "request_id": "get-1",
            "status": 503,
            "problem": PROBLEM + "store-unavailable",
            "route": "/collections/{id}",
            "method": "GET",
            "detail": "store down",
        },
    ]


async def test_a_write_refused_for_want_of_the_token_is_logged_without_what_the_client_sent() -> None:
    svc = service(write_token=TOKEN)

    reply = await svc.put(
        "c1", {"videos": ORIGINAL_VIDEOS}, request_id="w-1", authorization="Bearer guess-1234"
    )
    deleted = await svc.request("DELETE", "/collections/c1", request_id="w-2")

    assert (reply.status, deleted.status) == (401, 401)
    assert failed(svc) == [
        {
            "request_id": request_id,
            "status": 401,
            "problem": PROBLEM + "unauthorized",
            "route": "/collections/{id}",
            "method": method,
        }
        for request_id, method in (("w-1", "PUT"), ("w-2", "DELETE"))
    ]
    assert "guess-1234" not in repr(svc.log.events)


async def test_every_refused_write_is_logged_with_its_status_and_problem_type() -> None:
    svc = service()

    invalid = await svc.put("c1", {"videos": ["not a video id"]})
    malformed = await svc.request("PUT", "/collections/c1", Body([b"{"], 1))
    missing = await svc.request("DELETE", "/collections/nope")
    not_allowed = await svc.request("PUT", "/collections")
    unmatched = await svc.request("PUT", "/nowhere", request_id="u-1")

    statuses = [r.status for r in (invalid, malformed, missing, not_allowed, unmatched)]
    assert statuses == [422, 400, 404, 405, 404]
    assert [(f["status"], f["problem"], f["method"]) for f in failed(svc)] == [
        (422, PROBLEM + "validation-error", "PUT"),
        (400, PROBLEM + "malformed-json", "PUT"),
        (404, PROBLEM + "collection-not-found", "DELETE"),
        (405, PROBLEM + "method-not-allowed", "PUT"),
        (404, PROBLEM + "route-not-found", "PUT"),
    ]
    assert failed(svc)[-1]["request_id"] == "u-1"  # a server's own refusal: the id it answered with
    assert all("detail" not in f for f in failed(svc))  # a 4xx detail may quote the client's input


async def test_successes_missing_reads_and_refused_reads_log_no_failure() -> None:
    svc = service(write_token=TOKEN)

    await svc.put("c1", {"videos": ORIGINAL_VIDEOS}, authorization=f"Bearer {TOKEN}")
    await svc.get("/collections/c1")
    await svc.get("/collections/c1/stats")
    await svc.get("/collections/nope")
    await svc.get("/collections/nope/stats")
    await svc.get("/nowhere")
    await svc.get("/collections?limit=0")
    await svc.request("DELETE", "/collections/c1", authorization=f"Bearer {TOKEN}")

    assert [e.event for e in svc.log.events if e.level in ("warning", "error")] == []


async def test_a_bug_s_500_is_logged_once_as_the_unhandled_error_it_is() -> None:
    svc = service(store=BuggyStore())

    reply = await svc.get("/collections/c1")

    assert reply.status == 500
    assert len(svc.log.named("http.unhandled_error")) == 1
    assert failed(svc) == []
