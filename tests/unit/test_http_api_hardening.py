"""The HTTP edge in process, against hostile requests: unknown methods, paths outside ASCII,
deep JSON, bodies cut short, doubled or undecodable credentials, and bugs whose text quotes them.

``tests/integration/test_api.py`` and ``test_api_raw.py`` send the same requests to every server over a real socket.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from returns.result import Failure, Result

from influencer_stats.bootstrap.edge import ROUTES
from influencer_stats.domain.models import CollectionId, CollectionNotFound, StoreUnavailable
from influencer_stats.http.api import MAX_BODY_BYTES
from influencer_stats.http.body import read_request_body
from influencer_stats.http.handlers import MAX_JSON_DEPTH
from influencer_stats.http.incoming import HTTP_METHODS
from influencer_stats.http.routes import COLLECTION, HEALTHZ
from influencer_stats.interpreters.collections.memory_dict import DictCollectionStore
from tests.unit.http_api_support import TOKEN, Body, Service, assert_problem, document, header, service

STOLEN = "stolen-token-5e1f"

# --- doubles -------------------------------------------------------------------------------------


class QuotingStore(DictCollectionStore):
    """A store with a bug whose exception quotes what the client presented (as aiohttp's
    ``UnicodeEncodeError`` on a header did): deleting raises."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error

    async def delete(
        self, collection_id: CollectionId
    ) -> Result[None, CollectionNotFound | StoreUnavailable]:
        raise self.error


def cut_short(data: bytes, declared: int) -> Body:
    """A body whose client went away after ``data``, having declared ``declared`` bytes."""

    class CutShort(Body):
        async def __call__(self, limit: int) -> bytes | None:
            async def chunks() -> AsyncIterator[bytes]:
                yield data

            return await read_request_body(chunks(), limit, declared)

    return CutShort([data], declared)


async def unmatched(svc: Service, method: str, path: str) -> tuple[int, dict[str, object]]:
    reply = svc.api.unmatched(path, method, None)
    return reply.status, document(reply)


async def nothing_stored(svc: Service, collection_id: str) -> bool:
    return isinstance(await svc.store.get(CollectionId(collection_id)), Failure)


# --- methods -------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["M0", "M1999", "get", "FOO", "PRI", "DESCRIBE"])
@pytest.mark.parametrize("path", ["/healthz", "/collections/c", "/collections/c/stats", "/no/such/route"])
async def test_a_method_http_does_not_define_is_a_400_problem_on_and_off_the_routes(
    svc: Service, method: str, path: str
) -> None:
    reply = await svc.request(method, path, Body.json({"videos": []}))
    if reply.status == 404:  # the test client refuses unmatched paths the old way: ask the API
        reply = svc.api.unmatched(path, method, None)

    problem = assert_problem(reply, 400)
    assert problem["type"] == "urn:influencer-stats:problem:unknown-method"
    assert header(reply, "allow") is None
    assert await nothing_stored(svc, "c")


async def test_an_unknown_method_is_counted_as_other_never_under_its_own_name(svc: Service) -> None:
    for n in range(50):
        await svc.request(f"M{n}", "/healthz")
        svc.api.unmatched("/nowhere", f"M{n}", None)

    assert {method for _, method, _ in svc.metrics.requests} == {"other"}
    assert set(svc.metrics.requests) == {(HEALTHZ, "other", 400), ("unmatched", "other", 400)}


@pytest.mark.parametrize("method", sorted(HTTP_METHODS - {"GET", "HEAD", "PUT", "DELETE"}))
async def test_every_other_method_http_defines_is_a_405_with_allow_where_a_route_matches(
    svc: Service, method: str
) -> None:
    reply = await svc.request(method, "/collections/c")

    assert_problem(reply, 405)
    assert header(reply, "allow") == ", ".join(ROUTES[COLLECTION].methods)
    assert svc.api.unmatched("/nowhere", method, None).status == 404


# --- paths ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/collections/é", "/collections/é/stats", "/collections/\ufffd", "/é", "/healthz/é"]
)
async def test_a_path_outside_ascii_once_decoded_is_a_400_problem_matched_or_not(
    svc: Service, path: str
) -> None:
    for method in ("GET", "PUT", "DELETE"):
        reply = await svc.request(method, path, Body.json({"videos": []}))
        if reply.status == 404:
            reply = svc.api.unmatched(path, method, None)

        problem = assert_problem(reply, 400)
        assert problem["type"] == "urn:influencer-stats:problem:invalid-path"


async def test_an_unknown_method_is_refused_before_a_path_outside_ascii_as_the_parsers_do(
    svc: Service,
) -> None:
    status, problem = await unmatched(svc, "M0", "/é")

    assert (status, problem["type"]) == (400, "urn:influencer-stats:problem:unknown-method")
    reply = await svc.request("M0", "/collections/é")
    assert document(reply)["type"] == "urn:influencer-stats:problem:unknown-method"


@pytest.mark.parametrize("method", ["GET", "HEAD", "PUT", "DELETE", "POST"])
async def test_the_target_star_with_a_method_other_than_options_is_a_400_problem(
    svc: Service, method: str
) -> None:
    # aiohttp's parser refuses `GET *` (RFC 9112 3.2.4) before the app runs; uvicorn and Granian
    # passed it on, and the edge answered 404.
    status, problem = await unmatched(svc, method, "*")

    assert (status, problem["type"]) == (400, "urn:influencer-stats:problem:invalid-path")
    assert (await unmatched(svc, "OPTIONS", "*"))[0] == 404  # a server-wide OPTIONS: no such route
    assert (await unmatched(svc, "M0", "*"))[1]["type"] == "urn:influencer-stats:problem:unknown-method"


# --- JSON depth ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 1000 + b"]" * 1000,
        b'{"a":' * 1000 + b"1" + b"}" * 1000,
        b'{"videos": ' + b"[" * 1000 + b"]" * 1000 + b"}",
        b"[" * 100_000,  # never closed: as deep for a decoder
        b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1),
    ],
    ids=["arrays", "objects", "inside-videos", "unclosed", "one-past-the-limit"],
)
async def test_json_nested_past_the_limit_is_a_400_problem_and_nothing_is_stored(
    svc: Service, body: bytes
) -> None:
    reply = await svc.request("PUT", "/collections/c", Body([body], len(body)))

    problem = assert_problem(reply, 400)
    assert problem["type"] == "urn:influencer-stats:problem:malformed-json"
    assert str(MAX_JSON_DEPTH) in str(problem["detail"])
    assert svc.log.named("http.unhandled_error") == []
    assert await nothing_stored(svc, "c")


async def test_json_nested_up_to_the_limit_is_judged_by_its_shape(svc: Service) -> None:
    body = b'{"videos": ' + b"[" * (MAX_JSON_DEPTH - 1) + b"]" * (MAX_JSON_DEPTH - 1) + b"}"
    brackets_in_strings = b'{"videos": ["' + b"[" * 5_000 + b'"]}'

    deep = assert_problem(await svc.request("PUT", "/collections/c", Body([body], len(body))), 422)
    text = assert_problem(
        await svc.request("PUT", "/collections/c", Body([brackets_in_strings], len(brackets_in_strings))), 422
    )

    assert deep["field"] == "videos[0]"
    assert text["field"] == "videos[0]"


# --- bodies cut short ----------------------------------------------------------------------------


async def test_a_body_cut_short_is_a_400_never_stored_never_an_error(svc: Service) -> None:
    whole_json_prefix = b'{"videos":["-4lB5EKS5Uk"]}'  # 26 bytes of valid JSON, of 200 declared

    reply = await svc.request("PUT", "/collections/c", cut_short(whole_json_prefix, 200))

    problem = assert_problem(reply, 400)
    assert problem["type"] == "urn:influencer-stats:problem:incomplete-body"
    assert await nothing_stored(svc, "c")
    assert svc.metrics.requests == [(COLLECTION, "PUT", 400)]
    assert [(e.level, e.event) for e in svc.log.events] == [("debug", "http.body_incomplete")]


async def test_a_body_of_exactly_its_declared_length_is_read(svc: Service) -> None:
    data = b'{"videos":["-4lB5EKS5Uk"]}'

    reply = await svc.request("PUT", "/collections/c", cut_short(data, len(data)))

    assert reply.status == 201
    assert len(data) < MAX_BODY_BYTES


# --- credentials ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "authorization",
    [
        f"Bearer {TOKEN}, Bearer {TOKEN}",  # two lines, both right: still refused
        f"Bearer wrong, Bearer {TOKEN}",  # the one ASGI used to take
        f"Bearer {TOKEN}, Bearer wrong",
    ],
)
async def test_two_authorization_lines_never_authorize_a_write(authorization: str) -> None:
    guarded = service(write_token=TOKEN)

    put = await guarded.put("c", {"videos": []}, authorization=authorization)
    delete = await guarded.request("DELETE", "/collections/c", authorization=authorization)

    assert_problem(put, 401)
    assert_problem(delete, 401)
    assert await nothing_stored(guarded, "c")


@pytest.mark.parametrize(
    "authorization",
    [f"Bearer {STOLEN}\udcff", f"Bearer {TOKEN}\udcff", "Bearer tökén", f"Bearer \udcff{TOKEN}"],
    ids=["surrogate-escaped", "token-plus-surrogate", "latin-1", "surrogate-first"],
)
async def test_a_credential_outside_ascii_is_a_401_never_a_500(authorization: str) -> None:
    guarded = service(write_token=TOKEN)

    reply = await guarded.request("DELETE", "/collections/c", authorization=authorization)

    assert_problem(reply, 401)
    assert guarded.log.named("http.unhandled_error") == []
    assert guarded.metrics.requests == [(COLLECTION, "DELETE", 401)]


@pytest.mark.parametrize(
    "error",
    [
        UnicodeEncodeError(
            "utf-8", f"{STOLEN}\udcff", len(STOLEN), len(STOLEN) + 1, "surrogates not allowed"
        ),
        KeyError(f"{STOLEN}\udcff"),
        ValueError(f"header was Bearer {STOLEN}"),
        RuntimeError(STOLEN + "x" * 10_000),
    ],
    ids=["unicode-error", "key-error-repr-escaped", "quoted", "long"],
)
async def test_a_bug_is_logged_without_the_credential_the_client_presented(error: Exception) -> None:
    buggy = service(store=QuotingStore(error))

    reply = await buggy.request("DELETE", "/collections/c", authorization=f"Bearer {STOLEN}\udcff")

    assert_problem(reply, 500)
    [logged] = buggy.log.named("http.unhandled_error")
    text = str(logged.fields)
    assert STOLEN not in text
    assert type(error).__name__ in str(logged.fields["error"])
    assert len(str(logged.fields["error"])) <= 301
