"""Each server adapter speaks HTTP the same way: real process, real socket.

Parametrized over every server interpreter by the ``service`` fixture. What
``HttpApi`` decides (validation, status codes, problem bodies, write auth,
request ids, readiness, metrics) is tested in process by
``tests/unit/test_http_api_*.py``; here are the cases an adapter could get wrong:
routing and path parameters (decoding included), the framework's own 404 and
405, streaming a body in and refusing it at 1 MiB, HEAD, status codes without a
body, response headers and content types.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import orjson
import pytest

from influencer_stats.domain.models import VideoId
from influencer_stats.interpreters.videos.synthetic import synthetic_stats

ORIGINAL_ID = "99757a95-f758-499f-a170-bea93b2d8bcf"
ORIGINAL_VIDEOS = ["-4lB5EKS5Uk", "-jlLkTtgWUk", "1FEFpk-uIYo"]


def new_id() -> str:
    return "c-" + uuid.uuid4().hex


def assert_problem(response: httpx.Response, status: int) -> dict[str, object]:
    assert response.status_code == status
    assert response.headers["content-type"] == "application/problem+json"
    assert response.headers["x-request-id"]
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
    assert stats.headers["content-type"] == "application/json"
    assert len(stats.headers["x-request-id"]) == 16
    body = stats.json()
    assert body == {**expected_totals(ORIGINAL_VIDEOS), "videos": 3, "missing": []}
    assert body["impressions"] > 0 and body["engagements"] > 0 and body["score"] > body["engagements"]


def test_put_creates_with_a_location_then_replaces_and_get_returns_the_videos(client: httpx.Client) -> None:
    cid = new_id()

    created = client.put(f"/collections/{cid}", json={"videos": ORIGINAL_VIDEOS})
    replaced = client.put(f"/collections/{cid}", json={"videos": ORIGINAL_VIDEOS[:1]})

    assert created.status_code == 201
    assert created.headers["location"] == f"/collections/{cid}"
    assert replaced.status_code == 200
    assert "location" not in replaced.headers
    assert client.get(f"/collections/{cid}").json() == {"videos": ORIGINAL_VIDEOS[:1]}


def test_delete_answers_204_without_a_body_and_then_everything_is_404(client: httpx.Client) -> None:
    cid = new_id()
    client.put(f"/collections/{cid}", json={"videos": ORIGINAL_VIDEOS})

    deleted = client.delete(f"/collections/{cid}")

    assert (deleted.status_code, deleted.content) == (204, b"")
    assert deleted.headers["x-request-id"]
    assert_problem(client.get(f"/collections/{cid}"), 404)
    assert_problem(client.get(f"/collections/{cid}/stats"), 404)
    assert_problem(client.delete(f"/collections/{cid}"), 404)


def test_the_routes_without_a_parameter_answer_with_their_content_types(client: httpx.Client) -> None:
    cid = new_id()
    client.put(f"/collections/{cid}", json={"videos": []})

    health = client.get("/healthz")
    listed = client.get("/collections")
    metrics = client.get("/metrics")
    document = client.get("/openapi.json")

    assert (health.status_code, health.json()) == (200, {"status": "ok"})
    assert listed.headers["content-type"] == "application/json" and cid in listed.json()["ids"]
    assert metrics.headers["content-type"].startswith("text/plain")
    assert document.json()["openapi"] == "3.1.0"


def test_an_unknown_route_is_a_404_problem_carrying_the_request_id(client: httpx.Client) -> None:
    response = client.get("/no/such/route", headers={"x-request-id": "abc"})

    body = assert_problem(response, 404)
    assert body["type"] == "urn:influencer-stats:problem:route-not-found"
    assert response.headers["x-request-id"] == "abc"


@pytest.mark.parametrize("method", ["POST", "PATCH", "PROPFIND"])
def test_a_wrong_method_is_a_405_problem_with_allow(client: httpx.Client, method: str) -> None:
    response = client.request(method, f"/collections/{new_id()}", json={"videos": []})

    assert_problem(response, 405)
    assert response.headers["allow"] == "DELETE, GET, HEAD, PUT"


@pytest.mark.parametrize(("raw", "decoded"), [("bad%20id", "bad id"), ("semi;colon", "semi;colon")])
def test_the_collection_id_reaches_validation_decoded_and_whole(
    client: httpx.Client, raw: str, decoded: str
) -> None:
    put = assert_problem(client.put(f"/collections/{raw}", json={"videos": []}), 422)
    stats = assert_problem(client.get(f"/collections/{raw}/stats"), 422)

    assert (put["field"], put["value"]) == ("id", decoded)
    assert (stats["field"], stats["value"]) == ("id", decoded)


def test_a_body_declared_over_one_mebibyte_is_a_413_problem(client: httpx.Client) -> None:
    response = client.put(f"/collections/{new_id()}", content=b" " * (1024 * 1024 + 1))

    assert_problem(response, 413)


def test_a_large_chunked_body_is_refused_without_a_content_length(client: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(40):
            yield b" " * 65_536

    response = client.put(f"/collections/{new_id()}", content=chunks())

    assert_problem(response, 413)


def test_a_chunked_body_under_the_limit_is_read_whole(client: httpx.Client) -> None:
    cid = new_id()
    data = orjson.dumps({"videos": ORIGINAL_VIDEOS}) + b" " * 200_000  # whitespace is still JSON

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(data), 7_000):
            yield data[start : start + 7_000]

    response = client.put(f"/collections/{cid}", content=chunks())

    assert response.status_code == 201
    assert client.get(f"/collections/{cid}").json() == {"videos": ORIGINAL_VIDEOS}


def test_a_large_body_is_read_whole_before_it_is_judged(client: httpx.Client) -> None:
    cid = new_id()

    problem = assert_problem(client.put(f"/collections/{cid}", json={"videos": ["-4lB5EKS5Uk"] * 5_001}), 422)

    assert (problem["field"], problem["value"]) == ("videos", 5_001)
    assert_problem(client.get(f"/collections/{cid}"), 404)  # nothing was written


def test_head_answers_with_the_status_and_headers_of_get_and_no_body(client: httpx.Client) -> None:
    cid = new_id()
    client.put(f"/collections/{cid}", json={"videos": ORIGINAL_VIDEOS})

    for path in ("/healthz", f"/collections/{cid}/stats", "/collections/never-saved/stats"):
        get, head = client.get(path), client.head(path)

        assert head.status_code == get.status_code
        assert head.content == b""
        assert head.headers["content-type"] == get.headers["content-type"]
        assert head.headers["x-request-id"]
