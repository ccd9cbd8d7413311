"""Slice ``shares``: each client's share of YouTube units (``--shares memory|redis|none``).

Work that spends YouTube units for a client (its uncached stats: the video client's calls; its
imports and refreshes of playlists and channels: the readers' pages) is limited per client, at
the moment a unit is about to be spent, never at the edge: answers already cached stay free. A
client is who the edge says asks (``algebras.clients.CALLER``, set by ``HttpApi`` for every
request, whatever the server): a bearer token the service knows (``INFLUENCER_STATS_WRITE_TOKEN``,
by its hash), else its address (``X-Forwarded-For`` behind ``INFLUENCER_STATS_SHARE_PROXIES``
trusted proxies). A client past its share (``INFLUENCER_STATS_SHARE``, ``limits``' notation) gets
a 429 with ``Retry-After`` (``ShareSpent``); other clients' calls go on.

Its own slot ``shares`` is by default where the quota is counted (``same_as="quota"``): ``memory``
in this process, ``redis`` (the joint ``redis__shares``) for every worker and host, ``none`` with no
budget. It puts a ``SharedQuota`` around the ``Quota`` the quota choice built
(``bootstrap.quota.QUOTA_LAYERS``), so the YouTube base's call and the readers' spender ask the
share before the budget. Without this slice nothing is shared out: the budget alone limits.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from influencer_stats.bootstrap.quota import QUOTA_LAYERS, Quota
from influencer_stats.bootstrap.registry import Registry, Slot
from influencer_stats.bootstrap.slices.slice import Slice
from influencer_stats.bootstrap.wiring import Resources, Wiring

if TYPE_CHECKING:
    from limits.aio.storage import Storage

    from influencer_stats.algebras.youtube import QuotaSpending, VideosListCall
    from influencer_stats.domain.models import UpstreamError
    from influencer_stats.interpreters.shares.shares import ClientShares
    from influencer_stats.settings import Settings

#: Builds the shares of a choice (None: none, every client spends freely).
SharesBuilder = Callable[[Wiring], Awaitable["ClientShares | None"]]
SHARES: Registry[SharesBuilder] = Registry("shares")

SLICE = Slice(
    "shares",
    "each client's share of YouTube units (--shares memory|redis|none), a 429 past it",
    files=(
        "influencer_stats/interpreters/shares",
        "tests/unit/test_shares.py",
        "tests/integration/test_shares.py",
        "tests/integration/test_sources_shares.py",  # the sources slice's too: gone with the first removed
        "perf/shares_fairness.py",
    ),
    modules=("influencer_stats.interpreters.shares",),
    slots=(
        Slot(
            "shares",
            "where each client's share of YouTube units is counted (by default where the quota is)",
            SHARES,
            default="memory",
            same_as="quota",
        ),
    ),
)


class SharedQuota(Quota):
    """``inner`` (the quota the choice built), each unit first taken from the asking client's
    share (the shares ``shares`` builds, once per process); a client seen past its share is
    ``refused`` at once, until its window ends."""

    __slots__ = ("_budget", "_built_shares", "_inner", "_shares")

    def __init__(self, inner: Quota, shares: SharesBuilder) -> None:
        self._inner = inner
        self._shares = shares
        self._built_shares: ClientShares | None = None
        self._budget: QuotaSpending | None = None  # the inner spender, once a call is governed

    def units(self) -> int | None:
        return self._inner.units()

    def short(self) -> bool:
        return self._inner.short()

    def stretch(self) -> float:
        return self._inner.stretch()

    def refused(self) -> UpstreamError | None:
        shares, budget = self._built_shares, self._budget
        if shares is None or (budget is not None and budget.afford(1) is not None):
            return self._inner.refused()  # a spent budget refuses first, as in ``SharedCall``
        refused = shares.spent()
        return self._inner.refused() if refused is None else refused

    async def _built(self, wiring: Wiring) -> ClientShares | None:
        shares = await wiring.once("client-shares", lambda: self._shares(wiring))
        self._built_shares = shares
        return shares

    async def spender(self, wiring: Wiring) -> QuotaSpending | None:
        from influencer_stats.interpreters.shares.shares import SharedSpending

        async def build() -> QuotaSpending | None:
            inner, shares = await self._inner.spender(wiring), await self._built(wiring)
            return inner if shares is None else SharedSpending(shares, inner)

        return await wiring.once("shared-spender", build)  # the process's one, as the quota's

    async def governed(self, wiring: Wiring, call: VideosListCall) -> VideosListCall:
        from influencer_stats.interpreters.shares.shares import SharedCall

        inner, shares = await self._inner.governed(wiring, call), await self._built(wiring)
        if shares is None:
            return inner
        self._budget = await self._inner.spender(wiring)
        return SharedCall(inner, shares, self._budget)


async def _around(resources: Resources, quota: Quota) -> Quota:
    """The quota, each unit first taken from the client's share; as it is where no share is
    counted (``none``, declared ``silent``) or there is no budget to share: no layer built."""
    entry = SHARES[resources.settings.choices.one("shares")]
    return quota if entry.silent or quota.units() is None else SharedQuota(quota, entry.build)


QUOTA_LAYERS.append(_around)


def valid_share(settings: Settings) -> str | None:
    """Why ``INFLUENCER_STATS_SHARE`` is no share (exit 2 at start-up), or None."""
    from limits import parse_many

    try:
        parse_many(settings.share)
    except ValueError:
        return f"INFLUENCER_STATS_SHARE must be amounts per period, as 1000/hour or 1000/hour;3000/day: {settings.share[:40]!r}"
    return None


def client_shares(wiring: Wiring, storage: Storage) -> ClientShares:
    """The shares of ``INFLUENCER_STATS_SHARE`` for each client, counted in ``storage``."""
    from limits import parse_many
    from limits.aio.strategies import FixedWindowRateLimiter

    from influencer_stats.interpreters.shares.shares import ClientShares, token_digest

    settings = wiring.settings
    return ClientShares(
        FixedWindowRateLimiter(storage),
        parse_many(settings.share),
        known_tokens={token_digest(settings.write_token.value)} if settings.write_token else (),
        proxies=settings.share_proxies,
        clock=time.time,  # the storages' own: limits counts windows in wall time
    )


@SHARES.add("none", "no share: a client may spend the whole budget", silent=True)
async def _none(_: Wiring) -> ClientShares | None:
    return None


@SHARES.add(
    "memory",
    "each client's units counted in this process (each worker gives a share)",
    check=valid_share,
)
async def _memory(wiring: Wiring) -> ClientShares | None:
    from limits.aio.storage import MemoryStorage

    return client_shares(wiring, MemoryStorage())
