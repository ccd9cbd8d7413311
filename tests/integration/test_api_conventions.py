"""The HTTP conventions clients expect, on every server over a real socket: ETag and 304, the
``Link`` to a next page, a 204 without body headers.

What ``HttpApi`` decides (which answers carry a tag, how If-None-Match compares) is
``tests/unit/test_http_api_conditional.py``'s; here is what each server could get wrong: reading
every If-None-Match line, and writing a 304 and a 204 with no Content-Type, no body and no
Content-Length but 0 (RFC 9110 8.6). The history's routes: ``test_history.py``.
"""

from __future__ import annotations

import uuid

import httpx
import pytest

from influencer_stats.domain.models import CollectionId
from influencer_stats.http.pagination import cursor_of

VIDEOS = ["-4lB5EKS5Uk", "-jlLkTtgWUk", "1FEFpk-uIYo"]


def _new_id() -> str:
    return "c-" + uuid.uuid4().hex


def _assert_without_content(response: httpx.Response, status: int) -> None:
    assert response.status_code == status
    assert response.content == b""
    assert "content-type" not in response.headers
    assert response.headers.get("content-length", "0") == "0"
    assert "transfer-encoding" not in response.headers
    assert response.headers["x-request-id"]


@pytest.mark.parametrize("route", ["/collections/{id}", "/collections/{id}/stats"])
def test_a_tagged_answer_is_a_304_for_a_client_holding_its_tag_however_it_sends_it(
    client: httpx.Client, route: str
) -> None:
    collection = _new_id()
    client.put(f"/collections/{collection}", json={"videos": VIDEOS})
    path = route.replace("{id}", collection)
    first = client.get(path)
    tag = first.headers["etag"]

    answers = {
        "the tag": client.get(path, headers={"if-none-match": tag}),
        "weak": client.get(path, headers={"if-none-match": f"W/{tag}"}),
        "gzipped": client.get(path, headers={"if-none-match": f'"{tag[1:-1]}-gzip"'}),
        "a list": client.get(path, headers={"if-none-match": f'"other", {tag}'}),
        "two lines": client.get(path, headers=[("if-none-match", '"other"'), ("if-none-match", tag)]),
        "HEAD": client.head(path, headers={"if-none-match": tag}),
        "a wildcard": client.get(path, headers={"if-none-match": "*"}),
    }
    other = client.get(path, headers={"if-none-match": '"other"'})

    assert first.status_code == 200 and len(tag) == 34
    for how, answer in answers.items():
        _assert_without_content(answer, 304)
        assert answer.headers["etag"] == tag, how
    assert (other.status_code, other.headers["etag"], other.content) == (200, tag, first.content)


def test_a_changed_collection_is_answered_whole_with_its_new_tag(client: httpx.Client) -> None:
    collection = _new_id()
    client.put(f"/collections/{collection}", json={"videos": VIDEOS})
    old = client.get(f"/collections/{collection}/stats").headers["etag"]
    client.put(f"/collections/{collection}", json={"videos": VIDEOS[:1]})

    changed = client.get(f"/collections/{collection}/stats", headers={"if-none-match": old})

    assert changed.status_code == 200
    assert changed.headers["etag"] not in ("", old)
    assert changed.json()["videos"] == 1


def test_a_page_followed_by_another_links_to_it(client: httpx.Client) -> None:
    prefix = _new_id()
    for n in range(3):
        client.put(f"/collections/{prefix}-{n}", json={"videos": []})
    after = cursor_of(CollectionId(f"{prefix}-0"))

    page = client.get("/collections", params={"limit": "1", "cursor": after})
    followed = client.get(page.links["next"]["url"])

    assert page.json()["ids"] == [f"{prefix}-1"]
    assert page.headers["link"] == f'</collections?limit=1&cursor={page.json()["next"]}>; rel="next"'
    assert followed.json()["ids"] == [f"{prefix}-2"]


def test_a_delete_answers_204_without_content_type_or_length(client: httpx.Client) -> None:
    collection = _new_id()
    client.put(f"/collections/{collection}", json={"videos": VIDEOS})

    deleted = client.delete(f"/collections/{collection}")

    _assert_without_content(deleted, 204)
    assert client.get(f"/collections/{collection}").status_code == 404
