"""Paths routed as received, through ``HttpApi``: ``%2F`` inside an id never reaches another route.

Before, every server decoded the path and then routed it: ``GET /collections/pl%2Fstats``
answered the stats of ``pl`` and ``POST /collections/pl%2Frefresh`` refreshed it, past a
proxy's rule on raw paths. Now the route table matches the path as sent and decodes only
the id, once split off: ``pl/stats`` is an id, which validation refuses (422).
``tests/integration/test_raw_paths.py`` sends the same requests to every server.
"""

from __future__ import annotations

import pytest

from influencer_stats.bootstrap.edge import ROUTES
from influencer_stats.http.route_table import decode_segment
from influencer_stats.http.routes import COLLECTION, STATS
from tests.unit.http_api_support import ORIGINAL_VIDEOS, Body, assert_problem, document, service


@pytest.mark.parametrize(
    ("raw", "template", "collection_id"),
    [
        ("/collections/pl%2Fstats", COLLECTION, "pl/stats"),
        ("/collections/pl%2frefresh", COLLECTION, "pl/refresh"),
        ("/collections/pl%2Fstats/stats", STATS, "pl/stats"),
        ("/collections/a%2F..%2F..%2Fhealthz/stats", STATS, "a/../../healthz"),
        ("/collections/my%2Dlist/stats", STATS, "my-list"),  # any other escape decodes as ever
        ("/collections/pl/stats", STATS, "pl"),
    ],
)
def test_the_raw_path_is_routed_as_sent_and_only_the_id_is_decoded(
    raw: str, template: str, collection_id: str
) -> None:
    assert ROUTES.match_raw(raw) == (ROUTES[template], collection_id)
    assert ROUTES.match_raw(raw.encode()) == (ROUTES[template], collection_id)  # ASGI's raw_path


@pytest.mark.parametrize(
    "raw", ["/collections/pl/%73tats", "/%63ollections/pl", "/collections%2Fpl", "/healthz%2F", "/%68ealthz"]
)
def test_a_fixed_part_of_a_template_matches_only_as_written(raw: str) -> None:
    assert ROUTES.match_raw(raw) == (None, "")


def test_a_segment_decodes_as_utf_8_and_an_invalid_sequence_as_the_replacement_character() -> None:
    assert decode_segment("caf%C3%A9") == "café"
    assert decode_segment("%FF") == "\ufffd"
    assert decode_segment("plain") == "plain"


async def test_an_encoded_slash_is_part_of_the_id_never_a_route_of_its_own() -> None:
    api = service()
    await api.put("pl", {"videos": ORIGINAL_VIDEOS})
    json = {"content_type": "application/json"}

    stats = await api.get("/collections/pl%2Fstats")
    refresh = await api.request("POST", "/collections/pl%2Frefresh", Body.json({}), **json)
    delete = await api.request("DELETE", "/collections/x%2F..%2Fpl")

    assert assert_problem(stats, 422)["field"] == "id"
    assert assert_problem(stats, 422)["value"] == "pl/stats"
    assert assert_problem(refresh, 405)["type"] == "urn:influencer-stats:problem:method-not-allowed"
    assert assert_problem(delete, 422)["value"] == "x/../pl"
    assert document(await api.get("/collections/pl"))["videos"] == ORIGINAL_VIDEOS  # untouched


async def test_an_encoded_fixed_segment_is_a_404_not_its_route() -> None:
    api = service()
    await api.put("pl", {"videos": ORIGINAL_VIDEOS})

    reply = await api.get("/collections/pl/%73tats")

    assert assert_problem(reply, 404)["type"] == "urn:influencer-stats:problem:route-not-found"


async def test_other_escapes_in_an_id_still_name_the_collection() -> None:
    api = service()
    await api.put("my-list", {"videos": ORIGINAL_VIDEOS})

    assert document(await api.get("/collections/my%2Dlist"))["videos"] == ORIGINAL_VIDEOS
    assert (await api.get("/collections/my%2dlist/stats")).status == 200
