"""The VideoStatsSource contract, run against every registered client and wrapper.

Parametrized from the registries and built by the root's own builders: each
source sees the same synthetic world (the fake computes it; the real clients
talk to the YouTube double serving it over a real socket). Around a source
that answers, a wrapper must only keep the contract; what it is for shows in
the scenario its entry names (``Entry.scenario``), run below against an inner
source made for it: a wrapper whose own branch is broken fails there.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path

import pytest
from returns.result import Failure, Result, Success

from influencer_stats.algebras import VideoStatsSource
from influencer_stats.bootstrap.registry import Entry
from influencer_stats.bootstrap.root import build_video_stats
from influencer_stats.bootstrap.videos import VIDEO_CACHES, VIDEO_CLIENTS, VIDEO_WRAPPERS, SourceWrapper
from influencer_stats.domain.models import UpstreamError, UpstreamUnavailable, VideoBatch, VideoId
from influencer_stats.interpreters.videos.synthetic import synthetic_stats, synthetic_video_id
from tests.contract.wired import KEY, wired
from tests.support import A_YOUTUBE_CLIENT
from youtube_double import running_double

#: Every registered client on its own, and every registered wrapper and video cache around the
#: fake and around a real client, batched when one is installed (so the wrappers meet real calls too).
STACKS = (
    [(client, "none", "none") for client in VIDEO_CLIENTS.names()]
    + [
        (client, wrapper, "none")
        for wrapper in VIDEO_WRAPPERS.names()
        for client in ("fake", A_YOUTUBE_CLIENT)
    ]
    + [(client, "none", cache) for cache in VIDEO_CACHES.names() for client in ("fake", A_YOUTUBE_CLIENT)]
)


def _stack_id(client: str, wrappers: str, cache: str) -> str:
    return "+".join(name for name in (client, wrappers, cache) if name != "none")


@pytest.fixture(params=STACKS, ids=[_stack_id(*stack) for stack in STACKS])
async def source(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[VideoStatsSource]:
    client, wrappers, cache = request.param
    flags = {"video_client": client, "video_wrappers": wrappers, "video_cache": cache}
    async with (
        running_double(require_key=KEY) as double,
        wired(tmp_path, flags, youtube_url=double.url) as wiring,
    ):
        yield await build_video_stats(wiring)


async def test_known_videos_come_back_with_their_statistics(source: VideoStatsSource) -> None:
    ids = [VideoId("-4lB5EKS5Uk"), VideoId("-jlLkTtgWUk")]

    result = await source.fetch(ids)

    assert result == Success(VideoBatch({i: synthetic_stats(i) for i in ids}, ()))


async def test_unknown_videos_are_missing_not_errors(source: VideoStatsSource) -> None:
    known, unknown = VideoId("1FEFpk-uIYo"), VideoId("XXXXXXXXXXX")

    result = await source.fetch([known, unknown])

    assert result == Success(VideoBatch({known: synthetic_stats(known)}, (unknown,)))


async def test_an_empty_request_is_an_empty_batch(source: VideoStatsSource) -> None:
    assert await source.fetch([]) == Success(VideoBatch({}, ()))


async def test_every_id_of_a_large_request_is_accounted_for_exactly_once(source: VideoStatsSource) -> None:
    ids = [synthetic_video_id(n) for n in range(121)] + [VideoId("X1234567890")]

    match await source.fetch(ids):
        case Success(batch):
            assert set(batch.stats) | set(batch.missing) == set(ids)
            assert not set(batch.stats) & set(batch.missing)
            assert batch.missing == (VideoId("X1234567890"),)
            assert all(batch.stats[i] == synthetic_stats(i) for i in batch.stats)
        case other:
            raise AssertionError(other)


class Inner:
    """A scenario's inner source: the synthetic stats of the ids asked, or ``failure``; records each call."""

    def __init__(self, failure: UpstreamError | None = None) -> None:
        self.failure = failure
        self.calls: list[tuple[VideoId, ...]] = []

    async def fetch(self, ids: Sequence[VideoId]) -> Result[VideoBatch, UpstreamError]:
        self.calls.append(tuple(ids))
        if self.failure is not None:
            return Failure(self.failure)
        return Success(VideoBatch({i: synthetic_stats(i) for i in ids}, ()))


Wrap = Callable[[VideoStatsSource], Awaitable[VideoStatsSource]]
A, B = VideoId("-4lB5EKS5Uk"), VideoId("-jlLkTtgWUk")
FETCHES = 40  # far more than a breaker's threshold


def _found(outcome: Result[VideoBatch, UpstreamError]) -> dict[VideoId, object]:
    match outcome:
        case Success(batch):
            assert batch.missing == ()
            return dict(batch.stats)
        case other:
            raise AssertionError(other)


async def _failing(wrap: Wrap) -> None:
    """A source that keeps failing: the wrapper stops calling it, and every fetch still fails."""
    inner = Inner(UpstreamUnavailable("scripted"))
    source = await wrap(inner)
    outcomes = [await source.fetch([A]) for _ in range(FETCHES // 2)]
    called = len(inner.calls)
    outcomes += [await source.fetch([A]) for _ in range(FETCHES // 2)]

    assert all(isinstance(o, Failure) and isinstance(o.failure(), UpstreamUnavailable) for o in outcomes)
    assert 0 < called == len(inner.calls)  # none of the later fetches reached it


async def _repeated(wrap: Wrap) -> None:
    """The same fetch twice: the source is asked for each id once, and both answers agree."""
    inner = Inner()
    source = await wrap(inner)
    first = _found(await source.fetch([A, B]))
    second = _found(await source.fetch([A, B]))

    assert first == second == {A: synthetic_stats(A), B: synthetic_stats(B)}
    assert sorted(i for call in inner.calls for i in call) == sorted([A, B])


async def _concurrent(wrap: Wrap) -> None:
    """Two fetches at once: their ids go to the source in one call, and each gets its own."""
    inner = Inner()
    source = await wrap(inner)
    first, second = await asyncio.gather(source.fetch([A]), source.fetch([B]))

    assert (_found(first), _found(second)) == ({A: synthetic_stats(A)}, {B: synthetic_stats(B)})
    assert [sorted(call) for call in inner.calls] == [sorted([A, B])]


SCENARIOS = {"failing": _failing, "repeated": _repeated, "concurrent": _concurrent}
#: Every registered wrapper and video cache, with its slot.
WRAPPERS = [("video_wrappers", entry) for entry in VIDEO_WRAPPERS] + [
    ("video_cache", entry) for entry in VIDEO_CACHES
]


@pytest.mark.parametrize(("slot", "wrapper"), WRAPPERS, ids=[f"{s}={e.name}" for s, e in WRAPPERS])
async def test_each_wrapper_does_what_it_is_for_in_the_scenario_its_entry_names(
    slot: str, wrapper: Entry[SourceWrapper], tmp_path: Path
) -> None:
    scenario = SCENARIOS.get(wrapper.scenario or "")
    assert scenario is not None, (
        f"{wrapper.name!r} names no scenario of this suite (scenario=): {', '.join(SCENARIOS)}"
    )
    # Bounded: a wrapper that keeps a fetch waiting forever fails, and soon.
    async with asyncio.timeout(10), wired(tmp_path, {slot: wrapper.name}) as wiring:
        await scenario(lambda inner: wrapper.build(wiring, inner))
