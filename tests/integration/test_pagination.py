"""``GET /collections?limit=N&cursor=C`` on real sockets, through every server.

- Every server hands the query string to the API: pages of the default 100 and of a
  chosen limit cover every id once, in order; a bad limit or cursor is a 422 problem;
  other parameters are ignored (the default profile: the store's default, SQLite with its slice).

The Redis index behind it is the ``redis`` slice's: ``test_pagination_redis.py``. The contract
suite (``tests/contract/test_collection_store.py``) pages every store in process;
``tests/unit/test_http_pagination.py`` parses queries in process.
"""

from __future__ import annotations

import httpx
import pytest

from tests.support import RunningService

PROBLEM = "application/problem+json"
STORED = [f"p{n:03d}" for n in range(150)]  # sorted as written


def walk(http: httpx.Client, url: str, limit: int | None = None) -> list[dict[str, object]]:
    """Every page, each asked for with the ``next`` of the one before; bounded."""
    bodies: list[dict[str, object]] = []
    params: dict[str, str | int] = {} if limit is None else {"limit": limit}
    for _ in range(1_000):
        response = http.get(url, params=params)
        assert response.status_code == 200, response.text
        body: dict[str, object] = response.json()
        bodies.append(body)
        if "next" not in body:
            return bodies
        params["cursor"] = str(body["next"])
    raise AssertionError("the listing never ended")


def ids_of(bodies: list[dict[str, object]]) -> list[object]:
    return [i for body in bodies for i in body["ids"]]  # type: ignore[attr-defined]


# --- every server -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def stored(service: RunningService) -> list[str]:
    """STORED saved once in each server's service (written in reverse: the listing sorts)."""
    with httpx.Client(base_url=service.url, timeout=10) as http:
        for collection_id in reversed(STORED):
            assert http.put(f"/collections/{collection_id}", json={"videos": []}).status_code == 201
    return STORED


def test_pages_of_the_default_100_cover_every_id_once_in_order_and_the_last_has_no_next(
    client: httpx.Client, stored: list[str]
) -> None:
    bodies = walk(client, "/collections")

    assert [len(b["ids"]) for b in bodies] == [100, 50]  # type: ignore[arg-type]
    assert ids_of(bodies) == stored
    assert "next" in bodies[0]
    assert set(bodies[1]) == {"ids"}  # the last page has the original shape


@pytest.mark.parametrize(
    ("limit", "sizes"), [(1000, [150]), (150, [150]), (149, [149, 1]), (40, [40] * 3 + [30])]
)
def test_pages_of_a_chosen_limit_hold_at_most_that_many(
    client: httpx.Client, stored: list[str], limit: int, sizes: list[int]
) -> None:
    bodies = walk(client, "/collections", limit)

    assert [len(b["ids"]) for b in bodies] == sizes  # type: ignore[arg-type]
    assert ids_of(bodies) == stored


def test_other_parameters_are_ignored_and_values_may_be_percent_encoded(
    client: httpx.Client, stored: list[str]
) -> None:
    plain = client.get("/collections?limit=2")
    noisy = client.get("/collections?sort=desc&limit=%32&x=1")

    assert plain.status_code == noisy.status_code == 200
    assert noisy.json() == plain.json()
    assert noisy.json()["ids"] == stored[:2]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("limit=ten", "limit"),
        ("limit=1.5", "limit"),
        ("limit=5&limit=5", "limit"),
        ("cursor=", "cursor"),
        ("cursor=p001", "cursor"),
        ("cursor=2F", "cursor"),
    ],
)
def test_a_bad_limit_or_cursor_is_a_422_problem_naming_it(
    client: httpx.Client, query: str, field: str
) -> None:
    response = client.get(f"/collections?{query}")

    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == PROBLEM
    body = response.json()
    assert body["type"] == "urn:influencer-stats:problem:validation-error"
    assert body["field"] == field
    assert client.head(f"/collections?{query}").status_code == 422
