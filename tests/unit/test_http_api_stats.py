"""The HTTP edge in process: stats answers, their cache headers, upstream failures as problems.

The API runs in process on in-memory doubles (``tests/unit/http_api_support.py``);
``tests/integration/test_api.py`` and ``test_api_raw.py`` prove each server adapter speaks HTTP the same way
over a real socket.
"""

from __future__ import annotations

import pytest
from returns.result import Failure, Success

from influencer_stats.domain.models import (
    CacheInfo,
    CollectionId,
    CollectionNotFound,
    CollectionStats,
    InvalidUpstreamData,
    QuotaExceeded,
    SharedStateUnavailable,
    StatsAnswer,
    StatsError,
    UpstreamBusy,
    UpstreamMisconfigured,
    UpstreamTimeout,
    UpstreamUnavailable,
    VideoId,
)
from influencer_stats.interpreters.videos.synthetic import synthetic_stats, synthetic_video_id
from tests.unit.http_api_support import (
    ORIGINAL_VIDEOS,
    AnsweringStats,
    Service,
    assert_problem,
    document,
    header,
    service,
)

ORIGINAL_ID = "99757a95-f758-499f-a170-bea93b2d8bcf"


# --- doubles -------------------------------------------------------------------------------------


def expected_totals(videos: list[str]) -> dict[str, int]:
    stats = [synthetic_stats(VideoId(v)) for v in dict.fromkeys(videos) if not v.startswith("X")]
    engagements = sum(s.likes + s.comments + s.dislikes for s in stats)
    return {
        "impressions": sum(s.views for s in stats),
        "engagements": engagements,
        "score": engagements + sum(s.likes for s in stats),
    }


# --- stats answers -------------------------------------------------------------------------------


async def test_the_original_readme_flow_gives_non_zero_stats(svc: Service) -> None:
    put = await svc.put(ORIGINAL_ID, {"videos": ORIGINAL_VIDEOS})
    stats = await svc.get(f"/collections/{ORIGINAL_ID}/stats")

    assert put.status == 201
    assert (stats.status, stats.content_type) == (200, "application/json")
    body = document(stats)
    assert body == {**expected_totals(ORIGINAL_VIDEOS), "videos": 3, "missing": []}
    assert header(stats, "cache-status") is None  # no cache, no Cache-Status


async def test_stats_follow_a_replacement_immediately(svc: Service) -> None:
    await svc.put("c", {"videos": ORIGINAL_VIDEOS})
    await svc.get("/collections/c/stats")

    await svc.put("c", {"videos": ORIGINAL_VIDEOS[:1]})

    assert document(await svc.get("/collections/c/stats"))["videos"] == 1


async def test_duplicates_count_once_and_unknown_videos_are_listed_missing(svc: Service) -> None:
    videos = [ORIGINAL_VIDEOS[0], ORIGINAL_VIDEOS[0], "XdeletedVid"]
    await svc.put("c", {"videos": videos})

    body = document(await svc.get("/collections/c/stats"))

    assert body == {**expected_totals(videos), "videos": 1, "missing": ["XdeletedVid"]}


async def test_a_121_video_collection_is_summed_exactly(svc: Service) -> None:
    videos = [synthetic_video_id(n) for n in range(120)] + ["X0000000001"]
    await svc.put("c", {"videos": videos})

    body = document(await svc.get("/collections/c/stats"))

    assert body == {**expected_totals(videos), "videos": 120, "missing": ["X0000000001"]}


async def test_an_empty_collection_has_zero_stats(svc: Service) -> None:
    await svc.put("c", {"videos": []})

    assert document(await svc.get("/collections/c/stats")) == {
        "impressions": 0,
        "engagements": 0,
        "score": 0,
        "videos": 0,
        "missing": [],
    }


# --- upstream failures ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "status", "slug", "retry_after"),
    [
        (
            QuotaExceeded("YouTube answered 403 quotaExceeded", retry_after_s=3600),
            503,
            "upstream-quota-exceeded",
            "3600",
        ),
        (
            QuotaExceeded("YouTube answered 403 rateLimitExceeded", retry_after_s=60),
            503,
            "upstream-quota-exceeded",
            "60",
        ),
        (UpstreamMisconfigured("YouTube answered 400 keyInvalid"), 502, "upstream-misconfigured", None),
        (UpstreamUnavailable("YouTube answered 500 unknown"), 502, "upstream-unavailable", None),
        (InvalidUpstreamData("videos.list body does not parse"), 502, "upstream-invalid-response", None),
        (UpstreamTimeout("YouTube call timed out"), 504, "upstream-timeout", None),
        (UpstreamBusy("2,048 YouTube calls are waiting for a connection"), 503, "upstream-busy", "1"),
        (
            SharedStateUnavailable("the shared quota count did not answer"),
            503,
            "shared-state-unavailable",
            "1",
        ),
        (CollectionNotFound(CollectionId("c")), 404, "collection-not-found", None),
    ],
)
async def test_each_stats_failure_is_one_problem(
    error: StatsError, status: int, slug: str, retry_after: str | None
) -> None:
    failing = service(stats=lambda _store, _log: AnsweringStats(Failure(error)))

    reply = await failing.get("/collections/c/stats")

    body = assert_problem(reply, status)
    assert body["type"] == f"urn:influencer-stats:problem:{slug}"
    assert header(reply, "retry-after") == retry_after


# --- stats caching headers -----------------------------------------------------------------------


_STATS = CollectionStats(18760776, 383586, 710585, 3, ())


@pytest.mark.parametrize(
    ("cache", "cache_status", "age"),
    [
        (CacheInfo(False, 0.0, 10.0), "influencer-stats; fwd=miss; stored", None),
        (CacheInfo(True, 2.6, 7.4), "influencer-stats; hit; ttl=7", "2"),
        (
            CacheInfo(True, 13.0, -3.0, "revalidating"),
            "influencer-stats; hit; ttl=-3; detail=revalidating",
            "13",
        ),
        (
            CacheInfo(True, 40.0, -30.0, "stale-if-error"),
            "influencer-stats; hit; ttl=-30; detail=stale-if-error",
            "40",
        ),
    ],
)
async def test_a_cached_answer_carries_cache_status_and_age(
    cache: CacheInfo, cache_status: str, age: str | None
) -> None:
    cached = service(stats=lambda _store, _log: AnsweringStats(Success(StatsAnswer(_STATS, cache))))

    reply = await cached.get("/collections/c/stats")

    assert reply.status == 200
    assert (header(reply, "cache-status"), header(reply, "age")) == (cache_status, age)
    assert document(reply) == {
        "impressions": 18760776,
        "engagements": 383586,
        "score": 710585,
        "videos": 3,
        "missing": [],
    }


async def test_a_cached_answer_always_renders_the_stats_it_carries() -> None:
    hit = CacheInfo(True, 1.0, 9.0)
    answering = AnsweringStats(Success(StatsAnswer(_STATS, hit)))
    cached = service(stats=lambda _store, _log: answering)
    first = await cached.get("/collections/c/stats")

    answering.answer = Success(StatsAnswer(CollectionStats(1, 2, 3, 1, (VideoId("X0000000000"),)), hit))
    second = await cached.get("/collections/c/stats")

    assert document(first)["impressions"] == 18760776
    assert document(second) == {
        "impressions": 1,
        "engagements": 2,
        "score": 3,
        "videos": 1,
        "missing": ["X0000000000"],
    }
