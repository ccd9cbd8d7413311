"""The HTTP API end to end: real process, real socket, every route and error.

Parametrized over every server interpreter by the ``service`` fixture.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from influencer_stats.interpreters.videos.synthetic import synthetic_stats, synthetic_video_id
from influencer_stats.logic.models import VideoId

ORIGINAL_ID = "99757a95-f758-499f-a170-bea93b2d8bcf"
ORIGINAL_VIDEOS = ["-4lB5EKS5Uk", "-jlLkTtgWUk", "1FEFpk-uIYo"]


def new_id() -> str:
    return "c-" + uuid.uuid4().hex


def assert_problem(response: httpx.Response, status: int) -> dict[str, object]:
    assert response.status_code == status
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, object] = response.json()
    assert body["status"] == status
    assert {"type", "title", "detail"} <= body.keys()
    assert "Traceback" not in response.text
    return body


def expected_totals(videos: list[str]) -> dict[str, int]:
    stats = [synthetic_stats(VideoId(v)) for v in dict.fromkeys(videos) if not v.startswith("X")]
    engagements = sum(s.likes + s.comments + s.dislikes for s in stats)
    return {
        "impressions": sum(s.views for s in stats),
        "engagements": engagements,
        "score": engagements + sum(s.likes for s in stats),
    }


def test_the_original_readme_flow_gives_non_zero_stats(client: httpx.Client) -> None:
    put = client.put(f"/collections/{ORIGINAL_ID}", json={"videos": ORIGINAL_VIDEOS})
    stats = client.get(f"/collections/{ORIGINAL_ID}/stats")

    assert put.status_code in (200, 201)
    assert stats.status_code == 200
    body = stats.json()
    assert body == {**expected_totals(ORIGINAL_VIDEOS), "videos": 3, "missing": []}
    assert body["impressions"] > 0 and body["engagements"] > 0 and body["score"] > body["engagements"]


def test_put_creates_then_replaces_and_get_returns_the_videos(client: httpx.Client) -> None:
    cid = new_id()

    created = client.put(f"/collections/{cid}", json={"videos": ORIGINAL_VIDEOS})
    replaced = client.put(f"/collections/{cid}", json={"videos": ORIGINAL_VIDEOS[:1]})

    assert created.status_code == 201
    assert created.headers["location"] == f"/collections/{cid}"
    assert replaced.status_code == 200
    assert client.get(f"/collections/{cid}").json() == {"videos": ORIGINAL_VIDEOS[:1]}


def test_stats_follow_a_replacement_immediately(client: httpx.Client) -> None:
    cid = new_id()
    client.put(f"/collections/{cid}", json={"videos": ORIGINAL_VIDEOS})
    client.get(f"/collections/{cid}/stats")

    client.put(f"/collections/{cid}", json={"videos": ORIGINAL_VIDEOS[:1]})

    assert client.get(f"/collections/{cid}/stats").json()["videos"] == 1


def test_duplicates_count_once_and_unknown_videos_are_listed_missing(client: httpx.Client) -> None:
    cid = new_id()
    videos = [ORIGINAL_VIDEOS[0], ORIGINAL_VIDEOS[0], "XdeletedVid"]
    client.put(f"/collections/{cid}", json={"videos": videos})

    body = client.get(f"/collections/{cid}/stats").json()

    assert body == {**expected_totals(videos), "videos": 1, "missing": ["XdeletedVid"]}


def test_a_121_video_collection_is_summed_exactly(client: httpx.Client) -> None:
    cid = new_id()
    videos = [synthetic_video_id(n) for n in range(120)] + ["X0000000001"]
    client.put(f"/collections/{cid}", json={"videos": videos})

    body = client.get(f"/collections/{cid}/stats").json()

    assert body == {**expected_totals(videos), "videos": 120, "missing": ["X0000000001"]}


def test_an_empty_collection_has_zero_stats(client: httpx.Client) -> None:
    cid = new_id()
    client.put(f"/collections/{cid}", json={"videos": []})

    assert client.get(f"/collections/{cid}/stats").json() == {
        "impressions": 0,
        "engagements": 0,
        "score": 0,
        "videos": 0,
        "missing": [],
    }


def test_delete_removes_and_then_everything_is_404(client: httpx.Client) -> None:
    cid = new_id()
    client.put(f"/collections/{cid}", json={"videos": ORIGINAL_VIDEOS})

    assert client.delete(f"/collections/{cid}").status_code == 204
    assert_problem(client.get(f"/collections/{cid}"), 404)
    assert_problem(client.get(f"/collections/{cid}/stats"), 404)
    assert_problem(client.delete(f"/collections/{cid}"), 404)


def test_the_list_of_collections_contains_the_saved_ids_sorted(client: httpx.Client) -> None:
    ids = sorted(new_id() for _ in range(3))
    for cid in reversed(ids):
        client.put(f"/collections/{cid}", json={"videos": []})

    listed = client.get("/collections").json()["ids"]

    assert [i for i in listed if i in ids] == ids
    assert listed == sorted(listed)


def test_health_is_ok(client: httpx.Client) -> None:
    assert client.get("/healthz").status_code == 200


def test_unknown_collection_is_a_404_problem_naming_it(client: httpx.Client) -> None:
    body = assert_problem(client.get("/collections/never-saved/stats"), 404)

    assert "never-saved" in str(body["detail"])


def test_malformed_json_is_a_400_problem(client: httpx.Client) -> None:
    response = client.put(f"/collections/{new_id()}", content=b'{"videos": [')

    assert_problem(response, 400)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"videos": ["short"]}, "videos[0]"),
        ({"videos": ["-4lB5EKS5Uk", 7]}, "videos[1]"),
        ({"videos": "-4lB5EKS5Uk"}, "videos"),
        ({"vids": []}, "vids"),
        ([], "body"),
        ({"videos": ["-4lB5EKS5Uk"] * 5_001}, "videos"),
    ],
)
def test_a_wrong_body_is_a_422_problem_naming_the_field(
    client: httpx.Client, body: object, field: str
) -> None:
    cid = new_id()

    problem = assert_problem(client.put(f"/collections/{cid}", json=body), 422)

    assert problem["field"] == field
    assert_problem(client.get(f"/collections/{cid}"), 404)  # nothing was written


@pytest.mark.parametrize("bad", ["a" * 65, "bad%20id", "semi;colon"])
def test_a_bad_collection_id_is_a_422_problem(client: httpx.Client, bad: str) -> None:
    problem = assert_problem(client.put(f"/collections/{bad}", json={"videos": []}), 422)

    assert problem["field"] == "id"
    assert_problem(client.get(f"/collections/{bad}/stats"), 422)


def test_a_body_over_one_mebibyte_is_a_413_problem(client: httpx.Client) -> None:
    response = client.put(f"/collections/{new_id()}", content=b" " * (1024 * 1024 + 1))

    assert_problem(response, 413)


def test_a_large_chunked_body_is_refused_without_a_content_length(client: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(40):
            yield b" " * 65_536

    response = client.put(f"/collections/{new_id()}", content=chunks())

    assert_problem(response, 413)


def test_an_unknown_route_is_a_404_problem(client: httpx.Client) -> None:
    assert_problem(client.get("/nope"), 404)


def test_a_wrong_method_is_a_405_problem_with_allow(client: httpx.Client) -> None:
    response = client.post(f"/collections/{new_id()}", json={"videos": []})

    assert_problem(response, 405)
    assert "PUT" in response.headers["allow"]
