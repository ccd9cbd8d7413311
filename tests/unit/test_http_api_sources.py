"""Collections read from a playlist or a channel, through ``HttpApi``: the PUT, the refresh, what a
GET shows, what a PUT of ids or a DELETE forgets, and every refusal as a problem.

``tests/integration/test_sources.py`` reads real pages from the YouTube double over real sockets
on every server, with the quota counted.
"""

from __future__ import annotations

from typing import Any

from returns.result import Failure, Result, Success

from influencer_stats.domain.models import (
    CollectionId,
    CollectionSource,
    ReadError,
    SourceNotFound,
    UpstreamTimeout,
    VideoId,
)
from influencer_stats.http.problems import Reply
from influencer_stats.interpreters.readers.fake import FakeSourceReader
from tests.unit.http_api_support import TOKEN, Body, assert_problem, header
from tests.unit.http_api_support import document as _document
from tests.unit.sources_support import SourcesService, sources_service

CHANNEL = "UC" + "c" * 20 + "25"
V = [VideoId(f"video{n:06d}") for n in range(10)]


def _body(reply: Reply) -> Any:
    return _document(reply)


class ScriptedReader:
    """Answers each source with what the test put in ``lists`` (a failure, or the videos now)."""

    def __init__(self) -> None:
        self.lists: dict[str, Result[tuple[VideoId, ...], ReadError]] = {}
        self.reads: list[CollectionSource] = []

    async def videos(self, source: CollectionSource, limit: int) -> Result[tuple[VideoId, ...], ReadError]:
        self.reads.append(source)
        return self.lists[source.id]


async def refresh(api: SourcesService, collection_id: str, authorization: str | None = None) -> Reply:
    """A refresh as clients send it: ``{}`` as JSON."""
    return await api.refresh(collection_id, authorization=authorization)


async def test_a_playlist_is_read_and_saved_with_its_source_shown_on_every_read() -> None:
    api = sources_service()

    created = await api.put("c", {"playlist": "PLdemo30"})
    read = await api.get("/collections/c")
    stats = await api.get("/collections/c/stats")

    assert created.status == 201 and header(created, "location") == "/collections/c"
    expected = (await FakeSourceReader().videos(CollectionSource("playlist", "PLdemo30"), 100)).unwrap()
    assert _body(created) == {
        "videos": list(expected),
        "source": {"playlist": "PLdemo30"},
        "added": 30,
        "removed": 0,
    }
    assert _body(read) == {"videos": list(expected), "source": {"playlist": "PLdemo30"}}
    # The fake stats miss ids starting with X: one of these 30 does.
    assert stats.status == 200 and _body(stats)["videos"] + len(_body(stats)["missing"]) == 30


async def test_a_channel_is_read_as_its_uploads() -> None:
    api = sources_service()

    created = await api.put("c", {"channel": CHANNEL})

    assert created.status == 201
    assert _body(created)["source"] == {"channel": CHANNEL} and len(_body(created)["videos"]) == 25


async def test_a_playlist_that_does_not_exist_is_refused_and_nothing_is_saved() -> None:
    api = sources_service()

    refused = await api.put("c", {"playlist": "PLXgone"})

    problem = assert_problem(refused, 422)
    assert problem["type"] == "urn:influencer-stats:problem:source-not-found"
    assert problem["source"] == {"playlist": "PLXgone"}
    assert (await api.get("/collections/c")).status == 404


async def test_a_playlist_longer_than_a_collection_may_be_is_refused_saying_both_numbers() -> None:
    api = sources_service(max_videos=5_000)
    await api.put("c", {"videos": V[:2]})

    refused = await api.put("c", {"playlist": "PLbig6000"})

    problem = assert_problem(refused, 422)
    assert problem["type"] == "urn:influencer-stats:problem:source-too-large"
    assert (problem["videos"], problem["limit"]) == (6_000, 5_000)
    assert "6,000" in str(problem["detail"]) and "5,000" in str(problem["detail"])
    assert _body(await api.get("/collections/c")) == {"videos": V[:2]}  # the old videos stay


async def test_bodies_naming_a_source_badly_are_validation_problems() -> None:
    api = sources_service()
    for body, field in [
        ({"playlist": "P"}, "playlist"),
        ({"playlist": 5}, "playlist"),
        ({"channel": "PLnotachannel"}, "channel"),
        ({"channel": "UC" + "a" * 21 + "!"}, "channel"),
        ({"playlist": "PLa", "videos": []}, "videos"),
        ({"playlist": "PLa", "channel": CHANNEL}, "channel"),
        ({"channel": CHANNEL, "extra": 1}, "extra"),
    ]:
        problem = assert_problem(await api.put("c", body), 422)
        assert problem["field"] == field, body
    assert await api.store.ids(None, 10) == Success(())


async def test_a_refresh_reads_the_source_again_new_uploads_joining_and_gone_ones_leaving() -> None:
    reader = ScriptedReader()
    reader.lists["PLa"] = Success(tuple(V[:3]))
    api = sources_service(reader=reader)
    await api.put("c", {"playlist": "PLa"})
    reader.lists["PLa"] = Success((V[1], V[2], V[3], V[4]))

    refreshed = await refresh(api, "c")

    assert refreshed.status == 200
    assert _body(refreshed) == {"videos": V[1:5], "source": {"playlist": "PLa"}, "added": 2, "removed": 1}
    assert _body(await api.get("/collections/c"))["videos"] == V[1:5]


async def test_a_refresh_of_ids_of_an_unknown_collection_or_after_a_put_of_ids_is_refused() -> None:
    reader = ScriptedReader()
    reader.lists["PLa"] = Success(tuple(V[:3]))
    api = sources_service(reader=reader)
    await api.put("ids", {"videos": V[:1]})
    await api.put("c", {"playlist": "PLa"})
    await api.put("c", {"videos": V[5:6]})  # saved as ids: the source is forgotten

    assert (
        assert_problem(await refresh(api, "ids"), 409)["type"]
        == "urn:influencer-stats:problem:not-from-a-source"
    )
    assert (
        assert_problem(await refresh(api, "c"), 409)["type"]
        == "urn:influencer-stats:problem:not-from-a-source"
    )
    assert assert_problem(await refresh(api, "nobody"), 404)["type"] == (
        "urn:influencer-stats:problem:collection-not-found"
    )
    assert _body(await api.get("/collections/c")) == {"videos": V[5:6]}
    assert reader.reads == [CollectionSource("playlist", "PLa")]


async def test_a_delete_forgets_the_source_so_a_new_collection_of_that_id_has_none() -> None:
    api = sources_service()
    await api.put("c", {"playlist": "PLdemo3"})
    assert (await api.request("DELETE", "/collections/c")).status == 204
    await api.put("c", {"videos": V[:1]})

    assert await api.imports.sources.get(CollectionId("c")) == Success(None)
    assert (await refresh(api, "c")).status == 409


async def test_youtube_failing_during_a_read_answers_the_problem_the_stats_would_and_saves_nothing() -> None:
    reader = ScriptedReader()
    reader.lists["PLa"] = Failure(UpstreamTimeout("a playlist call took over 1 s"))
    reader.lists["PLgone"] = Failure(SourceNotFound(CollectionSource("playlist", "PLgone"), "404"))
    api = sources_service(reader=reader)

    assert assert_problem(await api.put("c", {"playlist": "PLa"}), 504)["type"] == (
        "urn:influencer-stats:problem:upstream-timeout"
    )
    assert (await api.get("/collections/c")).status == 404

    reader.lists["PLa"] = Success(tuple(V[:2]))
    await api.put("c", {"playlist": "PLa"})
    reader.lists["PLa"] = Failure(SourceNotFound(CollectionSource("playlist", "PLa"), "deleted"))
    assert (
        assert_problem(await refresh(api, "c"), 422)["type"]
        == "urn:influencer-stats:problem:source-not-found"
    )
    assert _body(await api.get("/collections/c"))["videos"] == V[:2]  # a failed refresh keeps the videos


async def test_a_refresh_is_a_write_it_needs_the_token_when_one_is_set() -> None:
    api = sources_service(write_token=TOKEN)
    await api.put("c", {"playlist": "PLdemo3"}, authorization=f"Bearer {TOKEN}")

    assert assert_problem(await refresh(api, "c"), 401)["type"] == "urn:influencer-stats:problem:unauthorized"
    assert (await refresh(api, "c", authorization=f"Bearer {TOKEN}")).status == 200
    assert (await api.request("GET", "/collections/c/refresh", Body([]))).status == 405
