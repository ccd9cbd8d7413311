"""The videos.list wire format: parsing answers and classifying errors."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Failure, Success

from influencer_stats.bounded import read_bounded
from influencer_stats.domain.models import (
    InvalidUpstreamData,
    QuotaExceeded,
    UpstreamMisconfigured,
    UpstreamUnavailable,
    VideoId,
    VideoStats,
)
from influencer_stats.domain.validation import MAX_VIDEOS_BOUND
from influencer_stats.interpreters.youtube.youtube_api import (
    MAX_BODY_BYTES,
    MAX_COUNT,
    answer,
    classify_error,
    parse_videos_list,
    request_url,
)

# The real answer for the original README's first video (REFERENCE.md, section 1).
REAL_ANSWER = b"""{"kind":"youtube#videoListResponse","etag":"x","pageInfo":{"totalResults":1,"resultsPerPage":1},
"items":[{"kind":"youtube#video","etag":"y","id":"-4lB5EKS5Uk","statistics":{"viewCount":"261734",
"likeCount":"14237","dislikeCount":"928","favoriteCount":"8001","commentCount":"451"}}]}"""


def error_body(code: int, reason: str, domain: str = "global") -> bytes:
    return json.dumps(
        {
            "error": {
                "code": code,
                "message": "m",
                "errors": [{"message": "m", "domain": domain, "reason": reason}],
            }
        }
    ).encode()


def test_a_real_answer_parses_counts_sent_as_strings() -> None:
    assert parse_videos_list(REAL_ANSWER) == Success(
        {VideoId("-4lB5EKS5Uk"): VideoStats(views=261734, likes=14237, comments=451, dislikes=928)}
    )


def test_hidden_counters_count_zero() -> None:
    body = b'{"items":[{"id":"aaaaaaaaaaa","statistics":{"viewCount":"10"}}]}'

    assert parse_videos_list(body) == Success({VideoId("aaaaaaaaaaa"): VideoStats(views=10)})


@pytest.mark.parametrize(
    ("sent", "count"),
    [
        (b'"0"', 0),
        (b'"261734"', 261734),
        (b'"999999999999"', 10**12 - 1),
        (b"0", 0),
        (b"7", 7),
        (b"999999999999", 10**12 - 1),
    ],
)
def test_a_count_is_a_string_of_digits_or_an_integer_below_the_bound(sent: bytes, count: int) -> None:
    body = b'{"items":[{"id":"aaaaaaaaaaa","statistics":{"likeCount":%s}}]}' % sent

    assert parse_videos_list(body) == Success({VideoId("aaaaaaaaaaa"): VideoStats(likes=count)})


#: The documented rule, written apart from the parser: a count is a JSON integer, or a JSON
#: string of ASCII digits without a leading zero, below 10**12 either way.
BOUND = 10**12
CANONICAL_DIGITS = re.compile(r"0|[1-9][0-9]*")  # [0-9]: ASCII only
FIELDS = {"viewCount": "views", "likeCount": "likes", "commentCount": "comments", "dislikeCount": "dislikes"}


def expected_count(value: object) -> int | None:
    """The count ``value`` stands for, or None: the whole answer is invalid."""
    if type(value) is int:  # not a bool
        return value if 0 <= value < BOUND else None
    if isinstance(value, str) and CANONICAL_DIGITS.fullmatch(value) and int(value) < BOUND:
        return int(value)
    return None


COUNT_VALUES = st.one_of(
    st.integers(),
    st.integers(min_value=BOUND - 3, max_value=BOUND + 3),
    st.integers(min_value=0).map(str),
    st.from_regex(r"[0-9]{1,20}", fullmatch=True),  # leading zeros, too many digits
    st.text(max_size=8),
    st.sampled_from(["NULL", "null", "1e3", "1.5", "-5", "-0", "", " 5", "+5", "0x1F", "\u00b2", "\u0661"]),
    st.floats(),
    st.booleans(),
    st.none(),
)


@settings(max_examples=500)
@given(st.sampled_from(list(FIELDS)), COUNT_VALUES)
def test_any_count_value_parses_or_is_invalid_data_never_an_exception(field: str, value: object) -> None:
    document = {"items": [{"id": "aaaaaaaaaaa", "statistics": {field: value, "favoriteCount": "x"}}]}
    body = json.dumps(document).encode()  # floats may be nan/inf: not JSON, must fail too

    expected = expected_count(value)
    match parse_videos_list(body):
        case Success(stats):
            assert expected is not None, value
            assert stats == {VideoId("aaaaaaaaaaa"): VideoStats(**{FIELDS[field]: expected})}
        case Failure(error):
            assert expected is None, value
            assert isinstance(error, InvalidUpstreamData)


def test_no_sum_of_counts_can_overflow_what_the_service_serialises() -> None:
    # score = engagements + likes: four counts of each of at most MAX_VIDEOS_BOUND videos.
    largest_sum = 4 * MAX_VIDEOS_BOUND * (MAX_COUNT - 1)

    assert MAX_COUNT == BOUND
    assert largest_sum < 2**63 // 10
    assert orjson.loads(orjson.dumps({"score": largest_sum})) == {"score": largest_sum}


@pytest.mark.parametrize("sent", [b"18446744073709551616", b'"18446744073709551616"'])
def test_a_count_of_2_to_the_64_is_invalid_upstream_data_not_an_exception(sent: bytes) -> None:
    body = b'{"items":[{"id":"aaaaaaaaaaa","statistics":{"viewCount":%s}}]}' % sent

    result = answer(200, body, MAX_BODY_BYTES)

    assert isinstance(result, Failure)
    assert isinstance(result.failure(), InvalidUpstreamData)


def test_an_answer_without_items_has_no_videos() -> None:
    assert parse_videos_list(b'{"kind":"youtube#videoListResponse","items":[]}') == Success({})
    assert parse_videos_list(b'{"kind":"youtube#videoListResponse"}') == Success({})


@pytest.mark.parametrize(
    "body",
    [
        b'{"items":[{"id":"aaaaaaaaaaa","statistics":{"viewCount":"-5"}}]}',
        b'{"items":[{"id":"aaaaaaaaaaa","statistics":{"viewCount":"abc"}}]}',
        b'{"items":[{"id":"aaaaaaaaaaa","statistics":{"likeCount":-1}}]}',
        b'{"items":[{"id":"aaaaaaaaaaa","statistics":{"viewCount":1.5}}]}',
        b'{"items":[{"id":"aaaaaaaaaaa","statistics":{"viewCount":"1.5"}}]}',
        b'{"items":[{"id":"aaaaaaaaaaa","statistics":{"viewCount":"1e3"}}]}',
        b'{"items":[{"id":"aaaaaaaaaaa","statistics":{"viewCount":"NULL"}}]}',
        b'{"items":[{"id":"aaaaaaaaaaa","statistics":{"viewCount":null}}]}',
        b'{"items":[{"id":"aaaaaaaaaaa","statistics":{"viewCount":"007"}}]}',
        b'{"items":[{"id":"aaaaaaaaaaa","statistics":{"viewCount":"1000000000000"}}]}',
        b'{"items":[{"id":"aaaaaaaaaaa","statistics":{"viewCount":1000000000000}}]}',
        b'{"items":[{"id":"aaaaaaaaaaa","statistics":{"viewCount":1.0}}]}',
        b'{"items":[{"id":"aaaaaaaaaaa","statistics":{"viewCount":""}}]}',
        b'{"items":[{"id":"aaaaaaaaaaa","statistics":{"viewCount":" 5"}}]}',
        b'{"items":[{"id":"aaaaaaaaaaa","statistics":{"viewCount":"+5"}}]}',
        b'{"items":[{"id":"aaaaaaaaaaa","statistics":{"viewCount":"1_000"}}]}',
        b'{"items":[{"id":"aaaaaaaaaaa","statistics":{"viewCount":"nan"}}]}',
        b'{"items":[{"id":"aaaaaaaaaaa","statistics":{"viewCount":true}}]}',
        # str.isdigit() says yes to these, int() says no: they once escaped as ValueError.
        '{"items":[{"id":"aaaaaaaaaaa","statistics":{"viewCount":"\u00b2"}}]}'.encode(),
        '{"items":[{"id":"aaaaaaaaaaa","statistics":{"viewCount":"\u0661\u0662"}}]}'.encode(),
        b'{"items":[{"statistics":{}}]}',
        b'{"items":[{"id":"aaaa',
        b"<html>502 Bad Gateway</html>",
        b'{"items":{}}',
    ],
)
def test_a_body_we_cannot_trust_is_invalid_upstream_data(body: bytes) -> None:
    assert isinstance(parse_videos_list(body), Failure)
    assert isinstance(parse_videos_list(body).failure(), InvalidUpstreamData)


@pytest.mark.parametrize(
    ("status", "reason", "expected", "retry_after"),
    [
        (403, "quotaExceeded", QuotaExceeded, 3600),
        (403, "dailyLimitExceeded", QuotaExceeded, 3600),
        (403, "rateLimitExceeded", QuotaExceeded, 60),
    ],
)
def test_quota_and_rate_limit_403s_are_quota_with_a_retry_after(
    status: int, reason: str, expected: type, retry_after: int
) -> None:
    error = classify_error(status, error_body(status, reason, "youtube.quota"))

    assert isinstance(error, expected)
    assert isinstance(error, QuotaExceeded)
    assert error.retry_after_s == retry_after


@pytest.mark.parametrize(
    ("status", "reason", "expected"),
    [
        (400, "keyInvalid", UpstreamMisconfigured),
        (400, "badRequest", UpstreamMisconfigured),
        (403, "forbidden", UpstreamMisconfigured),
        (403, "accessNotConfigured", UpstreamMisconfigured),
        (500, "backendError", UpstreamUnavailable),
        (503, "backendError", UpstreamUnavailable),
        (429, "rateLimitExceeded", UpstreamUnavailable),
    ],
)
def test_other_errors_are_classified_by_status_and_reason(status: int, reason: str, expected: type) -> None:
    assert isinstance(classify_error(status, error_body(status, reason)), expected)


def test_an_error_without_a_google_body_is_classified_by_status_alone() -> None:
    assert isinstance(classify_error(502, b"<html>bad gateway</html>"), UpstreamUnavailable)
    assert isinstance(classify_error(404, b""), UpstreamMisconfigured)


def test_the_error_detail_never_echoes_the_upstream_message() -> None:
    body = json.dumps(
        {"error": {"code": 400, "message": "key=SECRET123 bad", "errors": [{"reason": "keyInvalid"}]}}
    ).encode()

    assert "SECRET123" not in classify_error(400, body).detail


@pytest.mark.parametrize(
    ("ids", "query"),
    [
        (["a,b"], "a%2Cb"),
        (["a,b", "c"], "a%2Cb,c"),
        (["x&key=1", "y#z"], "x%26key%3D1,y%23z"),
        (["", "c"], ",c"),
        (["a b"], "a%20b"),
    ],
)
def test_ids_that_are_not_url_safe_are_escaped_one_by_one(ids: list[str], query: str) -> None:
    url = request_url("http://h/v", [VideoId(i) for i in ids])

    assert url == "http://h/v?part=statistics&id=" + query


def test_the_request_url_has_literal_commas_and_no_key() -> None:
    url = request_url(
        "http://127.0.0.1:1/youtube/v3/videos", [VideoId("-4lB5EKS5Uk"), VideoId("a_b-c000000")]
    )

    assert url == "http://127.0.0.1:1/youtube/v3/videos?part=statistics&id=-4lB5EKS5Uk,a_b-c000000"


async def test_a_body_past_the_limit_is_refused_as_invalid_data_without_reading_on() -> None:
    read: list[int] = []

    async def chunks() -> AsyncIterator[bytes]:
        for n in range(100):
            read.append(n)
            yield b"x" * 1024

    body = await read_bounded(chunks(), limit=4096)

    assert body is None
    assert len(read) == 5  # stopped at the first chunk past 4 KiB
    assert isinstance(answer(200, body, 4096).failure(), InvalidUpstreamData)
