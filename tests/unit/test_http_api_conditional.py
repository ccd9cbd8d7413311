"""The HTTP edge in process: ETags and 304s, the Link to a next page, a 204 without body headers.

The comparison rules of ``conditional`` on their own first (RFC 9110 13.1.2: weak comparison,
``*``, lists; the gzipped representation's ``-gzip`` tag), then through ``HttpApi`` on the core's
routes; the history's are in ``test_http_api_history.py``, every server in
``tests/integration/test_conditional.py``.
"""

from __future__ import annotations

import pytest
from returns.result import Success

from influencer_stats.domain.models import (
    CacheInfo,
    CollectionId,
    CollectionStats,
    StatsAnswer,
)
from influencer_stats.http.conditional import etag_of, names, not_modified, same_answer, tagged
from influencer_stats.http.pagination import cursor_of
from influencer_stats.http.problems import Reply
from tests.unit.http_api_support import (
    ORIGINAL_VIDEOS,
    AnsweringStats,
    Body,
    assert_problem,
    document,
    header,
    service,
)

TAG = '"0123456789abcdef0123456789abcdef"'
OPAQUE = TAG[1:-1]


# --- the rules -----------------------------------------------------------------------------------


def test_a_tag_is_the_bodys_blake2b_quoted_and_the_same_for_the_same_bytes() -> None:
    tag = etag_of(b'{"videos":[]}')

    assert tag == etag_of(b'{"videos":[]}') != etag_of(b'{"videos":["x"]}')
    assert len(tag) == 34 and tag[0] == tag[-1] == '"'
    assert all(c in "0123456789abcdef" for c in tag[1:-1])


@pytest.mark.parametrize(
    ("given", "named"),
    [
        (OPAQUE, True),
        (OPAQUE + "-gzip", True),  # the gzipped representation of the same answer
        (OPAQUE + "-br", False),
        (OPAQUE + "-gzip-gzip", False),
        (OPAQUE[:-1], False),
        ("", False),
        ("-gzip", False),
    ],
)
def test_a_tag_names_its_answer_and_its_gzipped_representation_only(given: str, named: bool) -> None:
    assert same_answer(given, OPAQUE) is named


@pytest.mark.parametrize(
    ("if_none_match", "named"),
    [
        (TAG, True),
        (f"W/{TAG}", True),  # weak comparison
        (f'"{OPAQUE}-gzip"', True),
        (f'W/"{OPAQUE}-gzip"', True),
        ("*", True),
        (" * ", True),
        (f'"other", {TAG}', True),  # a list: any of its tags
        (f'"a,b",W/"c", {TAG} ,', True),  # a comma inside a tag, an empty element
        ('"other", W/"another"', False),
        (OPAQUE, False),  # not an entity tag: no quotes
        ("garbage", False),
        ("", False),
        ('"*"', False),  # a tag whose text is *, not the wildcard
        (TAG.upper(), False),  # tags compare byte for byte
    ],
)
def test_if_none_match_names_an_answer_by_weak_comparison_star_or_any_of_a_list(
    if_none_match: str, named: bool
) -> None:
    assert names(if_none_match, TAG) is named


def test_only_a_tagged_200_becomes_a_304_keeping_its_cache_headers_but_not_its_body() -> None:
    headers = (("etag", TAG), ("cache-status", "influencer-stats; hit; ttl=7"), ("age", "2"))
    reply = Reply(200, b"{}", "application/json", (*headers, ("location", "/x"), ("link", "</c>")))

    assert not_modified(reply, TAG) == Reply(304, b"", "", headers)
    assert not_modified(reply, '"other"') is reply
    untagged = Reply(200, b"{}")
    assert not_modified(untagged, "*") is untagged
    failed = Reply(404, b"{}", "application/problem+json", (("etag", TAG),))
    assert not_modified(failed, "*") is failed


def test_tagged_adds_the_tag_to_a_200_only() -> None:
    assert header(tagged(Reply(200, b"{}")), "etag") == etag_of(b"{}")
    missing = Reply(404, b"{}")
    assert tagged(missing) is missing


# --- a collection --------------------------------------------------------------------------------


async def test_a_collection_carries_its_tag_and_a_client_holding_it_gets_a_304() -> None:
    svc = service()
    await svc.put("c", {"videos": ORIGINAL_VIDEOS})
    first = await svc.get("/collections/c")
    tag = header(first, "etag")

    again = await svc.get("/collections/c", if_none_match=tag)
    weak = await svc.get("/collections/c", if_none_match=f"W/{tag}")
    head = await svc.request("HEAD", "/collections/c", if_none_match=tag)

    assert tag == etag_of(first.body)
    for reply in (again, weak, head):
        assert (reply.status, reply.body, reply.content_type) == (304, b"", "")
        assert header(reply, "etag") == tag
        assert header(reply, "x-request-id")
    assert svc.metrics.requests[-1] == ("/collections/{id}", "HEAD", 304)


async def test_a_changed_collection_has_a_new_tag_and_the_old_one_gets_the_whole_answer() -> None:
    svc = service()
    await svc.put("c", {"videos": ORIGINAL_VIDEOS})
    old = header(await svc.get("/collections/c"), "etag")
    await svc.put("c", {"videos": ORIGINAL_VIDEOS[:1]})

    changed = await svc.get("/collections/c", if_none_match=old)

    assert changed.status == 200
    assert document(changed) == {"videos": ORIGINAL_VIDEOS[:1]}
    assert header(changed, "etag") not in (None, old)


async def test_a_wildcard_is_a_304_for_a_collection_that_exists_and_a_404_for_one_that_does_not() -> None:
    svc = service()
    await svc.put("c", {"videos": []})

    assert (await svc.get("/collections/c", if_none_match="*")).status == 304
    assert_problem(await svc.get("/collections/nope", if_none_match="*"), 404)
    assert_problem(await svc.get("/collections/bad%20id", if_none_match="*"), 422)


async def test_if_none_match_on_a_write_changes_nothing_of_its_answer() -> None:
    svc = service()
    await svc.put("c", {"videos": []})

    put = await svc.request(
        "PUT", "/collections/c", Body.json({"videos": ORIGINAL_VIDEOS}), if_none_match="*"
    )

    assert put.status == 200
    assert header(put, "etag") is None


# --- stats ---------------------------------------------------------------------------------------


_STATS = CollectionStats(18760776, 383586, 710585, 3, ())


@pytest.mark.parametrize(
    "cache",
    [
        None,
        CacheInfo(False, 0.0, 10.0),
        CacheInfo(True, 2.6, 7.4),
        CacheInfo(True, 13.0, -3.0, "revalidating"),
    ],
    ids=["computed", "miss", "hit", "stale"],
)
async def test_stats_carry_the_tag_of_their_body_however_they_were_served(cache: CacheInfo | None) -> None:
    svc = service(stats=lambda _store, _log: AnsweringStats(Success(StatsAnswer(_STATS, cache))))

    reply = await svc.get("/collections/c/stats")

    assert reply.status == 200
    assert header(reply, "etag") == etag_of(reply.body)


async def test_the_same_figures_keep_their_tag_as_their_age_moves_and_a_304_carries_the_age() -> None:
    young = service(
        stats=lambda _s, _l: AnsweringStats(Success(StatsAnswer(_STATS, CacheInfo(True, 1.0, 9.0))))
    )
    older = service(
        stats=lambda _s, _l: AnsweringStats(Success(StatsAnswer(_STATS, CacheInfo(True, 5.0, 5.0))))
    )
    tag = header(await young.get("/collections/c/stats"), "etag")

    revalidated = await older.get("/collections/c/stats", if_none_match=f'"x", {tag}')

    assert tag is not None
    assert (revalidated.status, revalidated.body) == (304, b"")
    assert [name for name, _ in revalidated.headers] == ["etag", "cache-status", "age", "x-request-id"]
    assert (header(revalidated, "etag"), header(revalidated, "age")) == (tag, "5")


async def test_stats_computed_now_are_revalidated_too_and_other_figures_are_not() -> None:
    svc = service()
    await svc.put("c", {"videos": ORIGINAL_VIDEOS})
    tag = header(await svc.get("/collections/c/stats"), "etag")
    assert tag is not None

    assert (await svc.get("/collections/c/stats", if_none_match=tag)).status == 304
    assert (await svc.get("/collections/c/stats", if_none_match=f'"{tag[1:-1]}-gzip"')).status == 304
    await svc.put("c", {"videos": ORIGINAL_VIDEOS[:2]})
    assert (await svc.get("/collections/c/stats", if_none_match=tag)).status == 200


# --- the Link to the next page -------------------------------------------------------------------


async def test_a_page_followed_by_another_links_to_it_with_its_limit_and_the_last_page_does_not() -> None:
    svc = service()
    for name in ("a", "b", "c"):
        await svc.put(name, {"videos": []})

    first = await svc.get("/collections?limit=2&junk=%3E%0D%0A")
    last = await svc.get(f"/collections?limit=2&cursor={cursor_of(CollectionId('b'))}")
    whole = await svc.get("/collections")

    cursor = document(first)["next"]
    assert header(first, "link") == f'</collections?limit=2&cursor={cursor}>; rel="next"'
    assert "next" not in document(last) and header(last, "link") is None
    assert header(whole, "link") is None


async def test_the_default_limit_is_left_out_of_the_link_and_a_cursor_given_is_replaced() -> None:
    svc = service()
    for n in range(102):
        await svc.put(f"c{n:03d}", {"videos": []})

    page = await svc.get(f"/collections?cursor={cursor_of(CollectionId('c000'))}")

    assert header(page, "link") == f'</collections?cursor={document(page)["next"]}>; rel="next"'
    assert document(page)["next"] == cursor_of(CollectionId("c100"))


# --- 204 -----------------------------------------------------------------------------------------


async def test_a_delete_answers_204_with_no_content_and_no_content_type() -> None:
    svc = service()
    await svc.put("c", {"videos": []})

    deleted = await svc.request("DELETE", "/collections/c")

    assert (deleted.status, deleted.body, deleted.content_type) == (204, b"", "")
    assert [name for name, _ in deleted.headers] == ["x-request-id"]
