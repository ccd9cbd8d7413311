"""The HTTP edge in process: collections, their validation (400, 413, 422), a store that is down.

The API runs in process on in-memory doubles (``tests/unit/http_api_support.py``);
``tests/integration/test_api.py`` and ``test_api_raw.py`` prove each server adapter speaks HTTP the same way
over a real socket.
"""

from __future__ import annotations

from urllib.parse import unquote

import orjson
import pytest
from returns.result import Failure, Result, Success

from influencer_stats.domain.models import (
    Collection,
    CollectionId,
    CollectionNotFound,
    Replaced,
    Revision,
    RevisionChanged,
    SaveOutcome,
    StoreUnavailable,
    VideoId,
)
from influencer_stats.http.api import MAX_BODY_BYTES
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

    async def replace_if(
        self, collection_id: CollectionId, videos: tuple[VideoId, ...], revision: Revision
    ) -> Result[Replaced, CollectionNotFound | RevisionChanged | StoreUnavailable]:
        return Failure(StoreUnavailable("store down"))

    async def delete(
        self, collection_id: CollectionId
    ) -> Result[None, CollectionNotFound | StoreUnavailable]:
        return Failure(StoreUnavailable("store down"))

    async def ids(
        self, after: CollectionId | None, limit: int
    ) -> Result[tuple[CollectionId, ...], StoreUnavailable]:
        return Failure(StoreUnavailable("store down"))


# --- collections ---------------------------------------------------------------------------------


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


# --- validation ----------------------------------------------------------------------------------


async def test_unknown_collection_is_a_404_problem_naming_it(svc: Service) -> None:
    body = assert_problem(await svc.get("/collections/never-saved/stats"), 404)

    assert body["type"] == "urn:influencer-stats:problem:collection-not-found"
    assert "never-saved" in str(body["detail"])


async def test_malformed_json_is_a_400_problem(svc: Service) -> None:
    reply = await svc.request("PUT", "/collections/c", Body([b'{"videos": [']))

    body = assert_problem(reply, 400)
    assert body["type"] == "urn:influencer-stats:problem:malformed-json"
    assert await svc.store.ids(None, 10) == Success(())


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


@pytest.mark.parametrize("bad", ["a" * 65, "bad id", "semi;colon", "{x}", "%25FF"])  # "é": a 400
@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
async def test_a_bad_collection_id_is_a_422_problem_on_every_method(
    svc: Service, bad: str, method: str
) -> None:
    reply = await svc.request(method, f"/collections/{bad}", Body.json({"videos": []}))

    problem = assert_problem(reply, 422)
    assert problem["field"] == "id"
    assert problem["value"] == unquote(bad)  # the path as sent, the id decoded
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


# --- the store -----------------------------------------------------------------------------------


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
