"""JSON bodies through ``HttpApi``: no object of any body may give a key twice (the ``sources``
slice's bodies: ``test_http_api_source_bodies.py``)."""

from __future__ import annotations

import msgspec
import pytest

from influencer_stats.http.body import is_json, repeated_key
from tests.unit.http_api_support import ORIGINAL_VIDEOS, Body, assert_problem, service


@pytest.mark.parametrize(
    "body",
    [
        b'{"videos":["-4lB5EKS5Uk"],"videos":["-jlLkTtgWUk"]}',
        b'{"videos":["-4lB5EKS5Uk"],"vid\\u0065os":["-jlLkTtgWUk"]}',  # the same key, escaped
    ],
)
async def test_a_put_giving_a_key_twice_is_a_422_and_stores_nothing(body: bytes) -> None:
    api = service()

    reply = await api.request("PUT", "/collections/c", Body([body], len(body)))

    problem = assert_problem(reply, 422)
    assert problem["field"] == "videos" and "more than once" in str(problem["detail"])
    assert_problem(await api.get("/collections/c"), 404)


async def test_a_put_of_unique_keys_is_stored_as_before() -> None:
    api = service()

    assert (await api.put("c", {"videos": ORIGINAL_VIDEOS})).status == 201


@pytest.mark.parametrize(
    ("text", "repeated"),
    [
        (b'{"a":1}', None),
        (b'{"a":"x:y","b":"::"}', None),  # colons inside strings: the slow path, which finds none
        (b'{"a":{"b":1,"c":2}}', None),
        (b'{"a":1,"a":2}', "a"),
        (b'{"a":{"b":1,"b":2}}', "b"),
        (b'[{"k":1},{"k":2,"k":3}]', "k"),
        (b'{"a\\u0062":1,"ab":2}', "ab"),
    ],
)
def test_a_repeated_key_is_found_at_any_depth(text: bytes, repeated: str | None) -> None:
    assert repeated_key(text, msgspec.json.decode(text)) == repeated


def test_a_body_of_unique_keys_is_checked_without_decoding_it_again(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> object:
        raise AssertionError("decoded again")

    monkeypatch.setattr("influencer_stats.http.body.json.loads", refuse)
    text = b'{"videos":["' + b'","'.join([b"-4lB5EKS5Uk"] * 5_000) + b'"]}'

    assert repeated_key(text, {"videos": []}) is None


@pytest.mark.parametrize(
    ("header", "json"),
    [
        ("application/json", True),
        (" application/json ;charset=utf-8", True),
        (None, False),
        ("text/json", False),
    ],
)
def test_is_json_reads_the_media_type_before_any_parameter(header: str | None, json: bool) -> None:
    assert is_json(header) is json
