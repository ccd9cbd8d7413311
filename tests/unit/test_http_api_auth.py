"""The HTTP edge in process: write auth, request ids, and a bug as a 500 that leaks nothing.

The API runs in process on in-memory doubles (``tests/unit/http_api_support.py``);
``tests/integration/test_api.py`` and ``test_api_raw.py`` prove each server adapter speaks HTTP the same way
over a real socket.
"""

from __future__ import annotations

import hmac

import pytest
from returns.result import Result

from influencer_stats.algebras.event_log import LOG_CONTEXT
from influencer_stats.domain.models import (
    Collection,
    CollectionId,
    CollectionNotFound,
    StoreUnavailable,
    VideoId,
)
from influencer_stats.http.routes import COLLECTION
from influencer_stats.interpreters.collections.memory_dict import DictCollectionStore
from tests.unit.http_api_support import (
    ORIGINAL_VIDEOS,
    TOKEN,
    Body,
    Service,
    assert_problem,
    document,
    header,
    service,
)

# --- doubles -------------------------------------------------------------------------------------


class BuggyStore(DictCollectionStore):
    """A store with a bug: reading raises."""

    async def get(
        self, collection_id: CollectionId
    ) -> Result[Collection, CollectionNotFound | StoreUnavailable]:
        raise RuntimeError("secret internals /etc/passwd")


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
