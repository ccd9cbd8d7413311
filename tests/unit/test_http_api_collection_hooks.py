"""What a slice adds to the core's ``/collections/{id}`` (``CollectionHooks``), through ``HttpApi``
with a part made up here: a PUT body it takes, a field a GET shows, what a PUT of ids and a DELETE
forget, each failure the answer; and the OpenAPI document extended by its ``CollectionDoc``. Without
any, a PUT takes ids only and a GET shows the videos alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from returns.result import Failure, Result, Success

from influencer_stats.domain.models import CollectionId, Revision, StoreUnavailable
from influencer_stats.http.openapi import openapi_spec
from influencer_stats.http.problems import Reply
from influencer_stats.http.route_table import CollectionDoc, CollectionHooks, RouteGroup
from tests.unit.http_api_support import ORIGINAL_VIDEOS, Service, assert_problem, document, service

C = CollectionId("c")
DOWN = StoreUnavailable("notes: down")


class Notes:
    """A made-up part: a PUT of ``{"note": ...}`` keeps a note, a GET shows it while the collection
    is at the revision it was noted at; ``fail`` makes each of its steps fail."""

    def __init__(self) -> None:
        self.notes: dict[CollectionId, tuple[str, Revision]] = {}
        self.calls: list[tuple[str, CollectionId]] = []
        self.fail = False

    def hooks(self) -> CollectionHooks:
        return CollectionHooks(
            put=self.put, saving_ids=self.saving_ids, shown=self.shown, deleted=self.deleted
        )

    async def put(self, collection_id: CollectionId, body: object) -> Reply | None:
        if not (isinstance(body, dict) and "note" in body):
            return None
        self.notes[collection_id] = (str(body["note"]), Revision("noted"))
        return Reply(202, b'{"noted":true}')

    async def saving_ids(self, collection_id: CollectionId) -> Result[None, StoreUnavailable]:
        self.calls.append(("saving_ids", collection_id))
        return Failure(DOWN) if self.fail else Success(None)

    async def deleted(self, collection_id: CollectionId) -> Result[None, StoreUnavailable]:
        self.calls.append(("deleted", collection_id))
        return Failure(DOWN) if self.fail else Success(None)

    async def shown(
        self, collection_id: CollectionId, revision: Revision
    ) -> Result[Mapping[str, object], StoreUnavailable]:
        if self.fail:
            return Failure(DOWN)
        note = self.notes.get(collection_id)
        return Success({"note": note[0]} if note is not None else {})


def noted() -> tuple[Service, Notes]:
    notes = Notes()
    return service(parts=lambda store, log: {"notes": notes}, collections=lambda _: [notes.hooks()]), notes


async def test_without_hooks_a_put_takes_ids_only_and_a_get_shows_the_videos_alone() -> None:
    api = service()

    refused = await api.put("c", {"playlist": "PLdemo3"})
    saved = await api.put("c", {"videos": ORIGINAL_VIDEOS})

    assert assert_problem(refused, 422)["field"] == "playlist"
    assert saved.status == 201
    assert document(await api.get("/collections/c")) == {"videos": ORIGINAL_VIDEOS}


async def test_a_body_a_part_takes_is_its_answer_and_any_other_is_the_cores() -> None:
    api, notes = noted()

    taken = await api.put("c", {"note": "launch"})
    saved = await api.put("c", {"videos": ORIGINAL_VIDEOS})

    assert (taken.status, taken.body) == (202, b'{"noted":true}')
    assert saved.status == 201 and notes.calls == [("saving_ids", C)]  # forgotten before the save
    assert document(await api.get("/collections/c")) == {"videos": ORIGINAL_VIDEOS, "note": "launch"}


async def test_a_delete_runs_what_the_part_forgets_after_the_store_deleted_it() -> None:
    api, notes = noted()
    await api.put("c", {"videos": ORIGINAL_VIDEOS})

    deleted = await api.request("DELETE", "/collections/c")
    again = await api.request("DELETE", "/collections/c")  # not found: the part still tidies up

    assert deleted.status == 204 and assert_problem(again, 404)
    assert notes.calls == [("saving_ids", C), ("deleted", C), ("deleted", C)]
    assert_problem(await api.get("/collections/c"), 404)


async def test_a_part_failing_is_the_requests_answer_and_a_failed_save_of_ids_stores_nothing() -> None:
    api, notes = noted()
    await api.put("c", {"videos": ORIGINAL_VIDEOS})
    notes.fail = True

    put = await api.put("c", {"videos": ORIGINAL_VIDEOS[:1]})
    get = await api.get("/collections/c")
    kept = (await api.store.get(C)).unwrap().videos
    delete = await api.request("DELETE", "/collections/c")
    notes.fail = False
    retried = await api.request("DELETE", "/collections/c")

    assert [assert_problem(reply, 503)["status"] for reply in (put, get, delete)] == [503] * 3
    assert list(kept) == ORIGINAL_VIDEOS  # the ids were not saved: the part had not forgotten
    assert assert_problem(retried, 404) and notes.calls[-2:] == [("deleted", C), ("deleted", C)]


def _group(doc: CollectionDoc) -> RouteGroup:
    def operations(_: dict[str, Any], __: tuple[Reply, ...]) -> dict[str, Any]:
        return {}

    return RouteGroup("notes", (), operations, {"Note": {"type": "object"}}, doc)


def test_a_collection_doc_extends_the_put_body_the_collection_and_the_puts_answers() -> None:
    doc = CollectionDoc(
        bodies=("Note",),
        fields={"note": {"type": "string"}},
        examples={"note": {"summary": "a note", "value": {"note": "launch"}}},
        description="A note is kept beside the videos.",
        responses={"202": {"description": "noted"}},
    )

    plain, extended = openapi_spec(), openapi_spec(groups=(_group(doc),))

    schemas, put = extended["components"]["schemas"], extended["paths"]["/collections/{id}"]["put"]
    assert plain["components"]["schemas"]["CollectionBody"]["oneOf"] == [
        {"$ref": "#/components/schemas/Videos"}
    ]
    assert set(plain["components"]["schemas"]["Collection"]["properties"]) == {"videos"}
    assert schemas["CollectionBody"]["oneOf"][1] == {"$ref": "#/components/schemas/Note"}
    assert set(schemas["Collection"]["properties"]) == {"videos", "note"}
    assert set(put["requestBody"]["content"]["application/json"]["examples"]) == {"videos", "note"}
    assert put["description"] == "A note is kept beside the videos." and "202" in put["responses"]
