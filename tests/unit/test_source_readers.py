"""The readers of playlists and channels: the wire format, the YouTube reader on a scripted GET
(pages, limits, retries, quota, timeouts), and the offline fake."""

from __future__ import annotations

import asyncio

import orjson
import pytest
from returns.result import Failure, Result, Success

from influencer_stats.algebras.youtube import Answered
from influencer_stats.domain.models import (
    CollectionSource,
    InvalidUpstreamData,
    QuotaExceeded,
    QuotaExhausted,
    SourceNotFound,
    SourceTooLarge,
    UpstreamError,
    UpstreamMisconfigured,
    UpstreamTimeout,
    UpstreamUnavailable,
    VideoId,
)
from influencer_stats.interpreters.readers.fake import DEFAULT_LENGTH, FakeSourceReader
from influencer_stats.interpreters.readers.youtube import YouTubeSourceReader
from influencer_stats.interpreters.readers.youtube_wire import (
    Page,
    channel_url,
    failure,
    parse_page,
    parse_uploads,
    playlist_url,
)
from influencer_stats.interpreters.youtube.call_gate import CallGate
from influencer_stats.testing.event_log import CapturingEventLog

ROOT = "http://127.0.0.1:1/youtube/v3"
PLAYLIST = CollectionSource("playlist", "PLcampaign")
CHANNEL = CollectionSource("channel", "UC" + "a" * 22)


def video(n: int) -> VideoId:
    return VideoId(f"video{n:06d}")  # 11 characters


def item(video_id: VideoId | str, privacy: str = "public") -> dict[str, object]:
    details: dict[str, object] = {"videoId": video_id}
    if privacy in ("public", "unlisted"):
        details["videoPublishedAt"] = "2026-01-02T03:04:05Z"
    return {"kind": "youtube#playlistItem", "contentDetails": details, "status": {"privacyStatus": privacy}}


def page(videos: list[dict[str, object]], total: int, token: str | None = None) -> bytes:
    body: dict[str, object] = {"items": videos, "pageInfo": {"totalResults": total, "resultsPerPage": 50}}
    if token is not None:
        body["nextPageToken"] = token
    return orjson.dumps(body)


def error(status: int, reason: str) -> bytes:
    return orjson.dumps({"error": {"code": status, "errors": [{"reason": reason}], "message": "no"}})


# --- the wire format ---------------------------------------------------------------------------


def test_a_page_keeps_the_watchable_videos_in_order_and_says_where_the_next_starts() -> None:
    body = page(
        [
            item(video(1)),
            item(video(2), "private"),
            item(video(3), "unlisted"),
            item(video(4), "privacyStatusUnspecified"),
        ],
        9,
        "CDIQAA",
    )

    assert parse_page(body) == Success(Page((video(1), video(3)), 4, "CDIQAA", 9))


def test_without_the_status_part_a_video_without_a_publishing_time_is_left_out() -> None:
    body = orjson.dumps(
        {
            "items": [
                {"contentDetails": {"videoId": video(1)}},
                {"contentDetails": {"videoId": video(2), "videoPublishedAt": "2026-01-01T00:00:00Z"}},
            ]
        }
    )

    assert parse_page(body).unwrap().videos == (video(2),)


@pytest.mark.parametrize(
    "body",
    [
        b'{"items": [',
        page([item("short")], 1),
        page([item(video(1))], 1, "x" * 201),
        page([item(video(1))], 1, ""),
        orjson.dumps({"items": [{"contentDetails": {"videoId": 5}, "status": {"privacyStatus": "public"}}]}),
    ],
    ids=["truncated", "not-an-id", "long-token", "empty-token", "id-not-a-string"],
)
def test_a_page_that_cannot_be_trusted_is_invalid_data_never_a_partial_list(body: bytes) -> None:
    assert isinstance(parse_page(body).failure(), InvalidUpstreamData)


def test_a_channel_answer_names_its_uploads_playlist_or_says_there_is_no_such_channel() -> None:
    found = {
        "items": [{"id": CHANNEL.id, "contentDetails": {"relatedPlaylists": {"likes": "", "uploads": "UUa"}}}]
    }

    assert parse_uploads(CHANNEL, orjson.dumps(found)) == Success("UUa")
    unknown = parse_uploads(CHANNEL, orjson.dumps({"pageInfo": {"totalResults": 0, "resultsPerPage": 5}}))
    assert isinstance(unknown.failure(), SourceNotFound)
    assert isinstance(parse_uploads(CHANNEL, b"{").failure(), InvalidUpstreamData)


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (404, error(404, "playlistNotFound"), SourceNotFound),
        (403, error(403, "playlistItemsNotAccessible"), SourceNotFound),
        (403, error(403, "quotaExceeded"), QuotaExceeded),
        (500, error(500, "backendError"), UpstreamUnavailable),
        (400, error(400, "invalidPageToken"), UpstreamMisconfigured),
        (404, b"<html>", UpstreamMisconfigured),
        (200, None, InvalidUpstreamData),
    ],
)
def test_an_error_answer_is_the_failure_the_stats_would_answer_or_no_such_list(
    status: int, body: bytes | None, expected: type
) -> None:
    assert isinstance(failure(PLAYLIST, status, body), expected)


def test_the_urls_ask_for_a_full_page_with_privacy_and_escape_what_they_carry() -> None:
    assert (
        playlist_url(ROOT, "PLa", None)
        == f"{ROOT}/playlistItems?part=contentDetails,status&maxResults=50&playlistId=PLa"
    )
    assert playlist_url(ROOT, "PLa", "a/b=").endswith("&pageToken=a%2Fb%3D")
    assert channel_url(ROOT, CHANNEL.id) == f"{ROOT}/channels?part=contentDetails&id={CHANNEL.id}"


# --- the YouTube reader on a scripted GET ---------------------------------------------------------

Script = dict[str, list[Result[Answered, UpstreamError]]]


class ScriptedGet:
    """Answers each URL with its scripted answers in turn (the last one repeats); counts calls."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.urls: list[str] = []

    async def __call__(self, url: str) -> Result[Answered, UpstreamError]:
        self.urls.append(url)
        answers = self.script[url]
        return answers.pop(0) if len(answers) > 1 else answers[0]


class Spender:
    def __init__(self, units: int) -> None:
        self.left = units
        self.spent = 0

    async def spend(self) -> UpstreamError | None:
        if self.left == 0:
            return QuotaExhausted("spent", retry_after_s=60)
        self.left -= 1
        self.spent += 1
        return None

    def afford(self, units: int) -> UpstreamError | None:
        return None if units <= self.left else QuotaExhausted(f"{units} > {self.left}", retry_after_s=60)


def ok(body: bytes) -> Result[Answered, UpstreamError]:
    return Success((200, body))


def pages_of(playlist: str, videos: list[VideoId], total: int | None = None) -> Script:
    """The playlist's pages of 50, each linked to the next by a token."""
    script: Script = {}
    chunks = [videos[i : i + 50] for i in range(0, len(videos), 50)] or [[]]
    for n, chunk in enumerate(chunks):
        token = None if n == 0 else f"T{n}"
        next_token = f"T{n + 1}" if n + 1 < len(chunks) else None
        body = page([item(v) for v in chunk], len(videos) if total is None else total, next_token)
        script[playlist_url(ROOT, playlist, token)] = [ok(body)]
    return script


def reader(
    get: ScriptedGet, spender: Spender | None = None, gate: CallGate | None = None, **options: float
) -> tuple[YouTubeSourceReader, list[float]]:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    built = YouTubeSourceReader(
        get,
        ROOT,
        CapturingEventLog(),
        gate or CallGate(4, per_flow=4, max_waiting=8),
        spend=None if spender is None else spender.spend,
        afford=None if spender is None else spender.afford,
        call_timeout_s=options.get("call_timeout_s", 5.0),
        deadline_s=options.get("deadline_s", 30.0),
        retries=int(options.get("retries", 2)),
        sleep=sleep,
    )
    return built, slept


async def test_a_playlist_is_read_page_by_page_a_unit_a_page() -> None:
    videos = [video(n) for n in range(120)]
    get, spender = ScriptedGet(pages_of(PLAYLIST.id, videos)), Spender(100)
    read, _ = reader(get, spender)

    assert await read.videos(PLAYLIST, 5_000) == Success(tuple(videos))
    assert len(get.urls) == spender.spent == 3


async def test_a_channel_is_read_through_its_uploads_playlist_one_unit_more() -> None:
    uploads = {"items": [{"contentDetails": {"relatedPlaylists": {"uploads": "UUa"}}}]}
    script = {
        channel_url(ROOT, CHANNEL.id): [ok(orjson.dumps(uploads))],
        **pages_of("UUa", [video(1), video(2)]),
    }
    get, spender = ScriptedGet(script), Spender(100)
    read, _ = reader(get, spender)

    assert await read.videos(CHANNEL, 5_000) == Success((video(1), video(2)))
    assert spender.spent == 2


async def test_a_list_longer_than_the_limit_is_refused_after_its_first_page() -> None:
    get, spender = (
        ScriptedGet(pages_of(PLAYLIST.id, [video(n) for n in range(60)], total=7_000)),
        Spender(100),
    )
    read, _ = reader(get, spender)

    refused = (await read.videos(PLAYLIST, 5_000)).failure()

    assert refused == SourceTooLarge(PLAYLIST, 7_000, 5_000)
    assert spender.spent == 1


async def test_a_list_whose_count_understates_it_is_refused_once_it_passes_the_limit() -> None:
    get = ScriptedGet(pages_of(PLAYLIST.id, [video(n) for n in range(120)], total=10))
    read, _ = reader(get)

    assert (await read.videos(PLAYLIST, 100)).failure() == SourceTooLarge(PLAYLIST, 120, 100)


async def test_pages_that_never_end_are_invalid_data_after_twice_the_pages_the_limit_needs() -> None:
    def next_of(n: int) -> bytes:  # each page a new token, each with an item (a private one)
        return page([item(video(1), "private")], 1, f"T{n + 1}")

    script = {
        playlist_url(ROOT, PLAYLIST.id, None if n == 0 else f"T{n}"): [ok(next_of(n))] for n in range(9)
    }
    get = ScriptedGet(script)
    read, _ = reader(get)

    assert isinstance((await read.videos(PLAYLIST, 100)).failure(), InvalidUpstreamData)
    assert len(get.urls) == 2 * (100 // 50 + 1)


async def test_a_transient_failure_is_retried_after_a_backoff_each_attempt_spending_a_unit() -> None:
    url = playlist_url(ROOT, PLAYLIST.id, None)
    get = ScriptedGet(
        {
            url: [
                Success((503, error(503, "backendError"))),
                Failure(UpstreamUnavailable("reset")),
                ok(page([item(video(1))], 1)),
            ]
        }
    )
    spender = Spender(100)
    read, slept = reader(get, spender)

    assert await read.videos(PLAYLIST, 10) == Success((video(1),))
    assert spender.spent == 3
    assert slept == [0.05, 0.1]


async def test_retries_end_with_the_last_failure_and_a_missing_playlist_is_never_retried() -> None:
    url = playlist_url(ROOT, PLAYLIST.id, None)
    read, _ = reader(ScriptedGet({url: [Success((500, error(500, "backendError")))]}), retries=1)
    assert isinstance((await read.videos(PLAYLIST, 10)).failure(), UpstreamUnavailable)

    get = ScriptedGet({url: [Success((404, error(404, "playlistNotFound")))]})
    read, _ = reader(get)
    assert isinstance((await read.videos(PLAYLIST, 10)).failure(), SourceNotFound)
    assert len(get.urls) == 1


async def test_a_spent_budget_makes_no_call() -> None:
    get = ScriptedGet(pages_of(PLAYLIST.id, [video(1)]))
    read, _ = reader(get, Spender(0))

    assert isinstance((await read.videos(PLAYLIST, 10)).failure(), QuotaExhausted)
    assert get.urls == []


class Hanging:
    """A GET that never answers (until cancelled)."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, url: str) -> Result[Answered, UpstreamError]:
        self.calls += 1
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


@pytest.mark.parametrize(("call_timeout_s", "deadline_s", "calls"), [(0.01, 30.0, 1), (30.0, 0.01, 1)])
async def test_a_call_past_its_timeout_or_a_read_past_the_deadline_is_an_upstream_timeout(
    call_timeout_s: float, deadline_s: float, calls: int
) -> None:
    hanging = Hanging()
    read = YouTubeSourceReader(
        hanging,
        ROOT,
        CapturingEventLog(),
        CallGate(1, per_flow=1, max_waiting=1),
        call_timeout_s=call_timeout_s,
        deadline_s=deadline_s,
        retries=0,
    )

    assert isinstance((await read.videos(PLAYLIST, 10)).failure(), UpstreamTimeout)
    assert hanging.calls == calls


# --- the offline fake -------------------------------------------------------------------------------


async def test_the_fake_reader_gives_stable_videos_as_many_as_the_ids_trailing_digits() -> None:
    fake = FakeSourceReader()
    first = (await fake.videos(CollectionSource("playlist", "PLdemo120"), 5_000)).unwrap()

    assert len(first) == 120 and len(set(first)) == 120
    assert (await fake.videos(CollectionSource("playlist", "PLdemo120"), 5_000)).unwrap() == first
    assert len((await fake.videos(PLAYLIST, 5_000)).unwrap()) == DEFAULT_LENGTH


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (CollectionSource("playlist", "PLXgone"), SourceNotFound),
        (CollectionSource("channel", "UCX" + "a" * 21), SourceNotFound),
        (CollectionSource("playlist", "PLbig6000"), SourceTooLarge),
    ],
)
async def test_the_fake_reader_has_lists_it_does_not_know_and_lists_too_long(
    source: CollectionSource, expected: type
) -> None:
    assert isinstance((await FakeSourceReader().videos(source, 5_000)).failure(), expected)


async def test_the_fake_reader_reads_a_channel_as_its_uploads_playlist() -> None:
    channel = CollectionSource("channel", "UC" + "b" * 20 + "30")
    uploads = CollectionSource("playlist", "UU" + "b" * 20 + "30")
    fake = FakeSourceReader()

    assert await fake.videos(channel, 5_000) == await fake.videos(uploads, 5_000)
