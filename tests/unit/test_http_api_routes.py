"""The HTTP edge in process: routing (404, 405, HEAD), health, readiness, metrics and OpenAPI.

The API runs in process on in-memory doubles (``tests/unit/http_api_support.py``);
``tests/integration/test_api.py`` and ``test_api_raw.py`` prove each server adapter speaks HTTP the same way
over a real socket.
"""

from __future__ import annotations

import orjson
import pytest
from returns.result import Success

from influencer_stats.bootstrap.edge import CHECKS, DOCUMENTED, ROUTES, openapi
from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.domain.validation import DEFAULT_MAX_VIDEOS
from influencer_stats.http.openapi import openapi_spec
from influencer_stats.http.routes import COLLECTION, DOCS_ROUTES, STATS
from tests.unit.http_api_support import (
    OPENAPI,
    ORIGINAL_VIDEOS,
    Body,
    Service,
    assert_head_like_get,
    assert_methods_answered,
    assert_problem,
    document,
    header,
    service,
)

#: The core's routes (a slice's routes are checked with its part, by its tests).
CORE_ROUTES = [route for route in ROUTES.values() if route.part is None]

# --- routes and methods --------------------------------------------------------------------------


async def test_health_is_ok(svc: Service) -> None:
    reply = await svc.get("/healthz")

    assert (reply.status, document(reply)) == (200, {"status": "ok"})


async def test_the_openapi_route_serves_the_document_it_was_given(svc: Service) -> None:
    reply = await svc.get("/openapi.json")

    assert (reply.status, reply.content_type, reply.body) == (200, "application/json", OPENAPI)


async def test_every_route_answers_each_of_its_methods_and_only_those(svc: Service) -> None:
    await assert_methods_answered(svc, CORE_ROUTES)


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
    assert await svc.store.ids(None, 10) == Success(())  # a refused PUT-shaped request wrote nothing


async def test_head_answers_like_get_on_every_get_route(svc: Service) -> None:
    await svc.put("c", {"videos": ORIGINAL_VIDEOS})
    await assert_head_like_get(svc, CORE_ROUTES)
    assert_problem(await svc.request("HEAD", "/collections/never/stats"), 404)


async def test_an_unknown_route_is_a_404_problem_counted_as_unmatched(svc: Service) -> None:
    reply = await svc.get("/nope", request_id="abc")

    body = assert_problem(reply, 404)
    assert body["type"] == "urn:influencer-stats:problem:route-not-found"
    assert "/nope" in str(body["detail"])
    assert header(reply, "x-request-id") == "abc"
    assert svc.metrics.requests == [("unmatched", "GET", 404)]


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
    paths = orjson.loads(openapi(DEFAULT_MAX_VIDEOS))["paths"]

    assert list(paths) == list(DOCUMENTED) == [t for t in ROUTES if t not in DOCS_ROUTES]
    for template in DOCUMENTED:
        # Every method the route answers, but HEAD: it answers wherever GET does, and is not listed apart.
        documented = {m.upper() for m in paths[template] if m != "parameters"}
        assert documented == set(ROUTES[template].methods) - {"HEAD"}
        assert ("HEAD" in ROUTES[template].methods) == ("GET" in documented)


def test_the_readiness_examples_name_the_checks_the_registered_choices_declare() -> None:
    declared = [c for slot in SLOTS.values() for entry in slot.registry for c in entry.ready]
    responses = orjson.loads(openapi(DEFAULT_MAX_VIDEOS))["paths"]["/readyz"]["get"]["responses"]
    example = responses["200"]["content"]["application/json"]["example"]

    assert list(CHECKS) == list(dict.fromkeys(declared))  # each once, in registration order
    assert example == {"status": "ready", "checks": dict.fromkeys(CHECKS, "ok")}
    assert ("503" in responses) == bool(CHECKS)  # with no check, /readyz is always ready


def test_without_checks_the_readiness_has_no_503_and_with_some_the_last_one_fails() -> None:
    assert set(openapi_spec()["paths"]["/readyz"]["get"]["responses"]) == {"200", "500"}
    [failing] = openapi_spec(checks=("db", "cache"))["paths"]["/readyz"]["get"]["responses"]["503"][
        "content"
    ]["application/problem+json"]["examples"].values()
    assert failing["value"]["checks"] == {"db": "ok", "cache": "failing"}
    assert failing["value"]["detail"] == "dependencies not answering: cache"
