"""The HTTP edge in process: the docs page, its allow-listed assets, and the OpenAPI document it shows.

The API runs in process on in-memory doubles (``tests/unit/http_api_support.py``);
``tests/integration/test_docs_browser.py`` serves the same page from each real
server and renders it in a headless browser.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from importlib import metadata
from typing import Any
from urllib.parse import unquote

import jsonschema_rs
import orjson
import pytest

from influencer_stats.bootstrap.edge import GROUPS
from influencer_stats.domain.models import QuotaExhausted
from influencer_stats.http import problems
from influencer_stats.http.docs import ASSETS
from influencer_stats.http.openapi import QUOTA_EXHAUSTED_EXAMPLE, openapi_document, openapi_spec
from influencer_stats.http.routes import DOCS, DOCS_ROUTES
from influencer_stats.version import version
from tests.unit.http_api_support import Body, Service, assert_problem, document, header, service

CONTENT_TYPES = {
    "swagger-ui.css": "text/css; charset=utf-8",
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-initializer.js": "text/javascript; charset=utf-8",
    "favicon-32x32.png": "image/png",
}
_URL = re.compile(r'(?:src|href)="([^"]*)"')

# --- the page -------------------------------------------------------------------------------------


async def test_the_docs_page_is_small_html_that_names_only_its_own_assets(svc: Service) -> None:
    reply = await svc.get("/docs")

    assert (reply.status, reply.content_type) == (200, "text/html; charset=utf-8")
    assert len(reply.body) < 2048
    html = reply.body.decode()
    urls = _URL.findall(html)
    assert sorted(url.partition("?")[0] for url in urls) == sorted(f"/docs/assets/{name}" for name in ASSETS)
    assert "<script>" not in html  # no inline script: the policy below forbids it
    assert "http:" not in html and "https:" not in html and "//" not in html.replace("://", "")
    assert header(reply, "cache-control") == "no-cache"
    assert "default-src 'self'" in str(header(reply, "content-security-policy"))
    assert header(reply, "x-request-id")


async def test_each_asset_url_carries_the_hash_of_what_the_asset_route_serves(svc: Service) -> None:
    html = (await svc.get("/docs")).body.decode()

    for url in _URL.findall(html):
        path, _, query = url.partition("?")
        asset = await svc.get(path)
        assert query == "v=" + hashlib.sha256(asset.body).hexdigest()[:16], url


@pytest.mark.parametrize("name", sorted(ASSETS))
async def test_each_allow_listed_asset_is_served_with_its_type_and_a_long_cache_lifetime(
    svc: Service, name: str
) -> None:
    reply = await svc.get(f"/docs/assets/{name}")

    assert (reply.status, reply.content_type) == (200, CONTENT_TYPES[name])
    assert len(reply.body) > 100
    assert header(reply, "cache-control") == "public, max-age=31536000, immutable"
    assert header(reply, "x-content-type-options") == "nosniff"
    assert b"sourceMappingURL" not in reply.body  # the maps are not served: no devtools 404


async def test_the_assets_are_swagger_ui_configured_for_this_origin(svc: Service) -> None:
    bundle = await svc.get("/docs/assets/swagger-ui-bundle.js")
    initializer = (await svc.get("/docs/assets/swagger-initializer.js")).body.decode()
    icon = await svc.get("/docs/assets/favicon-32x32.png")

    assert b"SwaggerUIBundle" in bundle.body
    assert 'url: "/openapi.json"' in initializer
    assert "validatorUrl: null" in initializer  # no call to an online validator
    assert "http" not in initializer
    assert icon.body.startswith(b"\x89PNG\r\n\x1a\n")


async def test_the_docs_routes_are_counted_under_their_own_templates(svc: Service) -> None:
    await svc.get("/docs")
    await svc.get("/docs/assets/swagger-ui.css")
    await svc.get("/docs/assets/nope.css")

    assert svc.metrics.requests == [
        (DOCS, "GET", 200),
        ("/docs/assets/swagger-ui.css", "GET", 200),
        ("unmatched", "GET", 404),
    ]


# --- what is not served ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/docs/assets/nope.js",
        "/docs/assets/index.html",  # in the bundle, not in the allow-list
        "/docs/assets/swagger-ui-standalone-preset.js",
        "/docs/assets/swagger-ui.css.map",
        "/docs/assets/SWAGGER-UI.CSS",
        "/docs/assets/",
        "/docs/assets",
        "/docs/",
        "/docs/swagger-ui.css",
    ],
)
async def test_a_name_outside_the_allow_list_is_a_404_problem(svc: Service, path: str) -> None:
    body = assert_problem(await svc.get(path), 404)

    assert body["type"] == "urn:influencer-stats:problem:route-not-found"


@pytest.mark.parametrize(
    "path",
    [
        "/docs/assets/..%2fpyproject.toml",
        "/docs/assets/..%2Fpyproject.toml",
        "/docs/assets/../pyproject.toml",
        "/docs/assets/%2e%2e/%2e%2e/pyproject.toml",
        "/docs/assets/..%2f..%2f..%2fpyproject.toml",
        "/docs/assets/swagger-ui.css/../../../pyproject.toml",
        "/docs/assets/..\\pyproject.toml",
        "/docs/assets/%2e%2e%5cpyproject.toml",
        "/docs/assets/../../influencer_stats/http/docs.py",
        "/docs/assets/../../../../../../etc/passwd",
        "/docs/assets/swagger-ui.css%00.png",
        "/docs/../pyproject.toml",
    ],
)
async def test_a_path_traversal_attempt_is_a_404_in_either_encoding(svc: Service, path: str) -> None:
    for sent in (path, unquote(path)):  # as sent, and percent-decoded as Granian matches it
        reply = await svc.get(sent)

        assert_problem(reply, 404)
        assert b"build-system" not in reply.body and b"root:" not in reply.body


@pytest.mark.parametrize("path", ["/docs", "/docs/assets/swagger-ui.css"])
async def test_the_docs_routes_answer_get_and_head_and_refuse_other_methods_with_405(
    svc: Service, path: str
) -> None:
    get, head = await svc.get(path), await svc.request("HEAD", path)
    assert (head.status, head.content_type) == (get.status, get.content_type)
    assert [n for n, _ in head.headers] == [n for n, _ in get.headers]

    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
        reply = await svc.request(method, path, Body.json({"videos": []}))

        assert_problem(reply, 405)
        assert header(reply, "allow") == "GET, HEAD"
    assert_problem(await svc.request("M0", path), 400)  # not an HTTP method, as everywhere


async def test_the_docs_stay_readable_when_writes_need_a_token() -> None:
    guarded = service(write_token="t" * 32)

    assert (await guarded.get("/docs")).status == 200
    assert (await guarded.get("/docs/assets/swagger-initializer.js")).status == 200


# --- the OpenAPI document the page shows ----------------------------------------------------------


def _operations(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method != "parameters":
                yield path, method, operation


def _assert_valid(spec: dict[str, Any], schema: dict[str, Any], value: object, where: str) -> None:
    validator = jsonschema_rs.validator_for({**schema, "components": spec["components"]})
    errors = [error.message for error in validator.iter_errors(value)]
    assert not errors, (where, value, errors)


def _media_examples(media: dict[str, Any]) -> list[Any]:
    if "example" in media:
        return [media["example"]]
    return [example["value"] for example in media.get("examples", {}).values()]


def test_every_operation_has_a_unique_camel_case_operation_id_and_a_declared_tag() -> None:
    spec = openapi_spec(groups=GROUPS)
    declared = [tag["name"] for tag in spec["tags"]]

    ids = [operation["operationId"] for _, _, operation in _operations(spec)]

    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z][A-Za-z]+", operation_id) for operation_id in ids), ids
    assert {
        "putCollection",
        "getCollection",
        "deleteCollection",
        "listCollections",
        "getCollectionStats",
        "getHealth",
        "getReadiness",
        "getMetrics",
        "getOpenApiDocument",
    } <= set(ids)
    assert declared == ["collections", "stats", "operations"]
    for path, method, operation in _operations(spec):
        assert operation["tags"] and set(operation["tags"]) <= set(declared), (path, method)
    assert spec["paths"]["/collections/{id}/stats"]["get"]["tags"] == ["stats"]
    assert spec["paths"]["/collections/{id}"]["put"]["tags"] == ["collections"]


def test_the_document_names_its_own_origin_as_its_server_and_leaves_out_the_docs_page() -> None:
    spec = orjson.loads(openapi_document(groups=GROUPS))

    assert [server["url"] for server in spec["servers"]] == ["/"]
    assert not DOCS_ROUTES & set(spec["paths"])


def test_the_document_states_the_version_of_the_installed_package() -> None:
    spec = orjson.loads(openapi_document(groups=GROUPS))
    example = spec["paths"]["/openapi.json"]["get"]["responses"]["200"]["content"]["application/json"]

    assert spec["info"]["version"] == metadata.version("influencer-stats")
    assert example["example"]["info"] == {"title": "influencer-stats", "version": spec["info"]["version"]}


def test_a_checkout_that_was_never_installed_says_so_as_its_version(monkeypatch: pytest.MonkeyPatch) -> None:
    def not_installed(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", not_installed)

    assert version() == "unknown (not installed)"


def test_every_operation_with_a_body_has_an_example_response() -> None:
    spec = openapi_spec(groups=GROUPS)

    for path, method, operation in _operations(spec):
        if method == "head":
            continue  # no body to show
        examples = [
            example
            for response in operation["responses"].values()
            for media in response.get("content", {}).values()
            for example in _media_examples(media)
        ]
        assert examples, (path, method)


def test_every_parameter_and_request_body_has_an_example_that_its_schema_accepts() -> None:
    spec = openapi_spec(groups=GROUPS)
    checked = 0

    for path, method, operation in _operations(spec):
        parameters = [*spec["paths"][path].get("parameters", []), *operation.get("parameters", [])]
        for parameter in parameters:
            _assert_valid(
                spec, parameter["schema"], parameter["example"], f"{method} {path} {parameter['name']}"
            )
            checked += 1
        for media in operation.get("requestBody", {}).get("content", {}).values():
            values = _media_examples(media)
            assert values, (path, method)
            for value in values:
                _assert_valid(spec, media["schema"], value, f"{method} {path} request")
                checked += 1
    assert checked >= 7


def test_every_response_example_is_accepted_by_its_own_schema() -> None:
    spec = openapi_spec(groups=GROUPS)
    checked = 0

    for path, method, operation in _operations(spec):
        for status, response in operation["responses"].items():
            for media_type, media in response.get("content", {}).items():
                for value in _media_examples(media):
                    _assert_valid(spec, media["schema"], value, f"{method} {path} {status} {media_type}")
                    if media_type == "application/problem+json":
                        assert value["status"] == int(status), (path, method, status)
                    checked += 1
    assert checked >= 40


def test_the_stats_503_documents_both_quota_problems_and_retry_after() -> None:
    response = openapi_spec(groups=GROUPS)["paths"]["/collections/{id}/stats"]["get"]["responses"]["503"]
    examples = response["content"]["application/problem+json"]["examples"]

    assert "Retry-After" in response["headers"]
    assert examples["quotaExhausted"]["value"]["type"] == "urn:influencer-stats:problem:quota-exhausted"
    assert examples["quotaExhausted"]["value"]["title"] == "Daily YouTube quota spent"
    assert examples["upstreamQuotaExceeded"]["value"]["type"] == (
        "urn:influencer-stats:problem:upstream-quota-exceeded"
    )
    assert "storeUnavailable" in examples
    assert "quota-exhausted" in response["description"]


def test_the_quota_exhausted_example_is_the_problem_the_service_answers() -> None:
    served = problems.for_error(QuotaExhausted("spent", retry_after_s=3600))
    example = document(QUOTA_EXHAUSTED_EXAMPLE)

    assert served.status == QUOTA_EXHAUSTED_EXAMPLE.status == 503
    assert (document(served)["type"], document(served)["title"]) == (example["type"], example["title"])
    assert [name for name, _ in served.headers] == [name for name, _ in QUOTA_EXHAUSTED_EXAMPLE.headers]


async def test_the_request_examples_work_and_the_problem_examples_are_what_the_service_answers(
    svc: Service,
) -> None:
    spec = openapi_spec(groups=GROUPS)
    item = spec["paths"]["/collections/{id}"]
    collection_id = item["parameters"][0]["example"]
    body = item["put"]["requestBody"]["content"]["application/json"]["examples"]["videos"]["value"]

    missing = await svc.get(f"/collections/{collection_id}")
    created = await svc.put(collection_id, body)
    read = await svc.get(f"/collections/{collection_id}")
    stats = await svc.get(f"/collections/{collection_id}/stats")
    bad_id = await svc.get("/collections/summer campaign!")

    not_found = item["get"]["responses"]["404"]["content"]["application/problem+json"]["examples"]
    invalid = item["get"]["responses"]["422"]["content"]["application/problem+json"]["examples"]
    assert document(missing) == not_found["collectionNotFound"]["value"]
    assert document(bad_id) == invalid["validationError"]["value"]
    assert created.status == 201 and header(created, "location") == f"/collections/{collection_id}"
    assert document(read) == body == item["get"]["responses"]["200"]["content"]["application/json"]["example"]
    assert stats.status == 200 and set(document(stats)) == {
        "impressions",
        "engagements",
        "score",
        "videos",
        "missing",
    }
