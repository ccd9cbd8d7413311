"""Each client's share of YouTube units (the ``shares`` slice): who a client is, the count on
``limits``' memory storage driven by an injected clock, what a refusal is, and the 429 it answers."""

from __future__ import annotations

import io
from collections.abc import Sequence
from types import SimpleNamespace

import limits.aio.storage.memory
import orjson
import pytest
from limits import RateLimitItem, parse_many
from limits.aio.storage import MemoryStorage
from limits.aio.strategies import FixedWindowRateLimiter
from limits.errors import StorageError
from returns.result import Failure, Result, Success

from influencer_stats.algebras.clients import CALLER, Caller
from influencer_stats.algebras.youtube import QuotaSpending
from influencer_stats.bootstrap.edge import ROUTES
from influencer_stats.bootstrap.quota import QUOTA_LAYERS, Quota
from influencer_stats.bootstrap.root import open_wiring
from influencer_stats.bootstrap.wiring import Wiring
from influencer_stats.config.resolve import resolve
from influencer_stats.domain.models import (
    CollectionId,
    QuotaExhausted,
    SharedStateUnavailable,
    ShareSpent,
    StatsAnswer,
    StatsByVideo,
    StatsError,
    UpstreamError,
    VideoId,
)
from influencer_stats.http import problems
from influencer_stats.http.incoming import Incoming
from influencer_stats.interpreters.shares.shares import (
    ClientShares,
    SharedCall,
    SharedSpending,
    client_of,
    token_digest,
)
from tests.unit.http_api_support import service

TOKEN = "s3cret-token-of-a-client"


class Clock:
    """Wall time as the test says: the storage's and the shares' one clock."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    # limits' memory storage reads time.time(): the same clock drives it (no sleep anywhere).
    monkeypatch.setattr(limits.aio.storage.memory, "time", SimpleNamespace(time=clock))
    return clock


def shares(clock: Clock, share: str = "3/minute", *, proxies: int = 0) -> ClientShares:
    return ClientShares(
        FixedWindowRateLimiter(MemoryStorage()),
        parse_many(share),
        known_tokens={token_digest(TOKEN)},
        proxies=proxies,
        clock=clock,
    )


async def take_as(shares: ClientShares, caller: Caller | None) -> UpstreamError | None:
    token = CALLER.set(caller)
    try:
        return await shares.take()
    finally:
        CALLER.reset(token)


A = Caller(None, "10.0.0.1", None)
B = Caller(None, "10.0.0.2", None)


def test_a_known_bearer_token_is_the_client_by_its_hash_never_by_itself() -> None:
    client = client_of(Caller(f"Bearer {TOKEN}", "10.0.0.1", None), {token_digest(TOKEN)}, 0)

    assert client == f"token:{token_digest(TOKEN)}"
    assert TOKEN not in client
    assert client_of(Caller(f"bearer  {TOKEN} ", "10.0.0.9", None), {token_digest(TOKEN)}, 0) == client


def test_an_unknown_token_is_no_client_of_its_own_but_its_address() -> None:
    # Else each new token would be a new share.
    assert client_of(Caller("Bearer made-up", "10.0.0.1", None), {token_digest(TOKEN)}, 0) == "addr:10.0.0.1"
    assert client_of(Caller(f"Basic {TOKEN}", "10.0.0.1", None), {token_digest(TOKEN)}, 0) == "addr:10.0.0.1"


@pytest.mark.parametrize(
    ("forwarded", "proxies", "client"),
    [
        ("198.51.100.7", 0, "addr:127.0.0.1"),  # not trusted by default: anyone can write it
        ("198.51.100.7", 1, "addr:198.51.100.7"),
        ("6.6.6.6, 198.51.100.7", 1, "addr:198.51.100.7"),  # a forged first hop is not the client
        ("6.6.6.6, 198.51.100.7, 10.1.1.1", 2, "addr:198.51.100.7"),
        ("198.51.100.7", 3, "addr:198.51.100.7"),  # fewer hops than proxies: the first
        (" , ", 1, "addr:127.0.0.1"),
        (None, 1, "addr:127.0.0.1"),
    ],
)
def test_the_forwarded_address_is_the_client_only_behind_trusted_proxies(
    forwarded: str | None, proxies: int, client: str
) -> None:
    assert client_of(Caller(None, "127.0.0.1", forwarded), (), proxies) == client


def test_no_address_at_all_is_one_client() -> None:
    assert client_of(Caller(None, None, None), (), 0) == "addr:unknown"


async def test_a_client_past_its_share_is_refused_until_its_window_ends_others_are_not(clock: Clock) -> None:
    limited = shares(clock)

    taken = [await take_as(limited, A) for _ in range(3)]
    refused = await take_as(limited, A)
    clock.now += 20
    still = await take_as(limited, A)
    other = await take_as(limited, B)

    assert taken == [None, None, None]
    assert isinstance(refused, ShareSpent) and isinstance(refused, QuotaExhausted)
    assert refused.retry_after_s == 60
    assert "3 YouTube units per 60 s" in refused.detail
    assert isinstance(still, ShareSpent) and still.retry_after_s == 40
    assert other is None
    clock.now += 41
    assert await take_as(limited, A) is None  # a new window


class _Counted(FixedWindowRateLimiter):
    """The memory count, each time it is asked recorded."""

    asked = 0

    async def hit(self, item: RateLimitItem, *identifiers: str, cost: int = 1) -> bool:
        self.asked += 1
        return await super().hit(item, *identifiers, cost=cost)


def spent_as(shares: ClientShares, caller: Caller | None) -> ShareSpent | None:
    token = CALLER.set(caller)
    try:
        return shares.spent()
    finally:
        CALLER.reset(token)


async def test_a_refusal_holds_until_its_window_ends_without_asking_the_count_again(clock: Clock) -> None:
    limiter = _Counted(MemoryStorage())
    limited = ClientShares(limiter, parse_many("2/minute"), known_tokens=(), proxies=0, clock=clock)

    assert spent_as(limited, A) is None  # nothing seen yet: the count decides
    taken = [await take_as(limited, A) for _ in range(3)]
    asked = limiter.asked
    clock.now += 15
    again, known = await take_as(limited, A), spent_as(limited, A)

    assert taken[:2] == [None, None] and isinstance(taken[2], ShareSpent)
    assert isinstance(again, ShareSpent) and again.retry_after_s == 45
    assert isinstance(known, ShareSpent) and known.retry_after_s == 45
    assert limiter.asked == asked  # refused from what was seen: the count not asked
    assert spent_as(limited, B) is None and spent_as(limited, None) is None
    clock.now += 46  # the window ended: the count is asked again, and has units
    assert spent_as(limited, A) is None
    assert await take_as(limited, A) is None and limiter.asked == asked + 1


async def test_every_share_given_is_kept_the_first_spent_refuses(clock: Clock) -> None:
    limited = shares(clock, "3/minute;4/hour")

    first = [await take_as(limited, A) for _ in range(4)]
    clock.now += 61
    second = [await take_as(limited, A) for _ in range(2)]

    assert first[:3] == [None, None, None] and isinstance(first[3], ShareSpent)
    assert first[3].retry_after_s == 60
    assert second[0] is None  # the minute's share is new, the hour's has one unit left
    assert isinstance(second[1], ShareSpent) and second[1].retry_after_s == 3600 - 61


async def test_work_of_no_request_is_the_services_own_and_never_limited(clock: Clock) -> None:
    limited = shares(clock, "1/minute")

    assert [await take_as(limited, None) for _ in range(5)] == [None] * 5


async def test_a_token_and_an_address_are_two_shares(clock: Clock) -> None:
    limited = shares(clock, "1/minute")
    with_token = Caller(f"Bearer {TOKEN}", "10.0.0.1", None)

    assert await take_as(limited, A) is None
    assert await take_as(limited, with_token) is None
    assert isinstance(await take_as(limited, with_token), ShareSpent)


class _Down(FixedWindowRateLimiter):
    async def hit(self, item: RateLimitItem, *identifiers: str, cost: int = 1) -> bool:
        raise StorageError(ConnectionError("down"))


async def test_a_count_that_does_not_answer_spends_nothing(clock: Clock) -> None:
    down = ClientShares(
        _Down(MemoryStorage()), parse_many("3/minute"), known_tokens=(), proxies=0, clock=clock
    )

    assert isinstance(await take_as(down, A), SharedStateUnavailable)


class _Call:
    def __init__(self) -> None:
        self.asked: list[Sequence[VideoId]] = []

    async def __call__(self, ids: Sequence[VideoId]) -> Result[StatsByVideo, UpstreamError]:
        self.asked.append(ids)
        return Success({})


async def test_a_call_past_the_share_is_not_made(clock: Clock) -> None:
    inner = _Call()
    call = SharedCall(inner, shares(clock, "1/minute"), None)
    token = CALLER.set(A)
    try:
        made, refused = await call([VideoId("a")]), await call([VideoId("b")])
    finally:
        CALLER.reset(token)

    assert made == Success({})
    assert isinstance(refused, Failure) and isinstance(refused.failure(), ShareSpent)
    assert inner.asked == [[VideoId("a")]]


class _Spender:
    def __init__(self) -> None:
        self.spent = 0
        self.exhausted = False  # the whole budget spent: it affords nothing

    async def spend(self) -> UpstreamError | None:
        self.spent += 1
        return None

    def afford(self, units: int) -> QuotaExhausted | None:
        return QuotaExhausted("no", retry_after_s=5) if units > 2 or self.exhausted else None


async def test_a_readers_page_takes_the_share_first_then_the_budgets_unit(clock: Clock) -> None:
    budget = _Spender()
    spending = SharedSpending(shares(clock, "1/minute"), budget)
    alone = SharedSpending(shares(clock, "1/minute"), None)
    token = CALLER.set(A)
    try:
        spent, refused = await spending.spend(), await spending.spend()
        alone_spent = await alone.spend()
    finally:
        CALLER.reset(token)

    assert spent is None and isinstance(refused, ShareSpent)
    assert budget.spent == 1  # the refused page took no unit of the budget
    assert alone_spent is None and alone.afford(1_000) is None
    assert spending.afford(3) is not None and spending.afford(2) is None


def test_a_spent_share_is_a_429_with_retry_after_and_a_problem_body() -> None:
    reply = problems.for_error(ShareSpent("this client has spent its share", retry_after_s=42))

    assert reply.status == 429
    assert ("retry-after", "42") in reply.headers
    assert reply.content_type == problems.PROBLEM_JSON
    body = orjson.loads(reply.body)
    assert body["type"] == "urn:influencer-stats:problem:share-spent"
    assert body["status"] == 429


class _WhoAsks:
    """A stats query that notes who the edge says asks, and answers a spent share."""

    def __init__(self) -> None:
        self.seen: list[Caller | None] = []

    async def stats(self, collection_id: CollectionId) -> Result[StatsAnswer, StatsError]:
        self.seen.append(CALLER.get())
        return Failure(ShareSpent("spent", retry_after_s=7))

    async def invalidate(self, collection_id: CollectionId) -> None:
        return None


async def test_the_edge_says_who_asks_while_it_answers_and_a_spent_share_is_its_429() -> None:
    asks = _WhoAsks()
    svc = service(stats=lambda _store, _log: asks)
    route, collection_id = ROUTES.match_raw("/collections/c/stats")
    assert route is not None
    incoming = Incoming(
        route,
        "GET",
        collection_id,
        authorization="Bearer x",
        peer="10.0.0.1",
        forwarded_for="198.51.100.7, 10.9.9.9",
    )

    reply = await svc.api.serve(incoming)

    assert asks.seen == [Caller("Bearer x", "10.0.0.1", "198.51.100.7, 10.9.9.9")]
    assert CALLER.get() is None  # reset once answered
    assert reply.status == 429 and ("retry-after", "7") in reply.headers


async def test_a_spent_budget_refuses_before_any_share_is_taken(clock: Clock) -> None:
    limited = shares(clock, "1/minute")
    spent = _Spender()
    spent.afford = lambda units: QuotaExhausted("spent", retry_after_s=9)  # type: ignore[method-assign]
    inner = _Call()
    token = CALLER.set(A)
    try:
        # The budget refuses (the governor inside the call, the spender's spend): no share is taken.
        call = SharedCall(inner, limited, spent)
        await call([VideoId("a")])
        await SharedSpending(limited, spent).spend()
        left = await limited.take()
    finally:
        CALLER.reset(token)

    assert inner.asked == [[VideoId("a")]] and spent.spent == 1
    assert left is None  # the client's one unit is still its own


class _Budget(Quota):
    """A budget of 10 units (whichever quota choice is installed), spending through ``spender``."""

    def __init__(self, spender: _Spender) -> None:
        self._spender = spender

    def units(self) -> int | None:
        return 10

    async def spender(self, wiring: Wiring) -> QuotaSpending | None:
        return self._spender


async def test_the_share_comes_before_the_budget_of_every_kind_of_call() -> None:
    environ = {
        "YOUTUBE_API_URL": "http://127.0.0.1:9/youtube/v3/videos",
        "INFLUENCER_STATS_SHARE": "1/minute",
    }
    settings = resolve(environ, {"shares": "memory", "logger": "silent", "metrics": "none"})
    inner, budget = _Call(), _Spender()
    async with open_wiring(settings, io.BytesIO()) as wiring:
        (layer,) = QUOTA_LAYERS  # the shares slice's, the only one
        quota = await layer(wiring, _Budget(budget))  # as the root puts it around the quota
        spender = await quota.spender(wiring)  # a reader's pages (imports, refreshes)
        call = await quota.governed(wiring, inner)  # the video client's calls
        token = CALLER.set(A)
        try:
            page, refused_page = await spender.spend(), await spender.spend()  # type: ignore[union-attr]
            refused_call = await call([VideoId("a")])
        finally:
            CALLER.reset(token)
        own = await call([VideoId("b")])  # the service's own work: no client, no share

        assert spender is await quota.spender(wiring)
        assert page is None and isinstance(refused_page, ShareSpent)
        assert budget.spent == 1  # the refused page spent none of the budget
        assert isinstance(refused_call, Failure) and isinstance(refused_call.failure(), ShareSpent)
        assert own == Success({}) and inner.asked == [[VideoId("b")]]
        assert quota.units() == 10
        own_work = quota.refused()  # no client: the service's own work
        token = CALLER.set(A)
        try:
            refused_now = quota.refused()  # what the per-video cache asks before any call
            budget.exhausted = True
            budget_first = quota.refused()  # the call refuses for the budget (503), as SharedCall
        finally:
            CALLER.reset(token)
        assert isinstance(refused_now, ShareSpent)
        assert budget_first is None and own_work is None
