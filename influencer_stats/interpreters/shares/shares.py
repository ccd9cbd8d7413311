"""Each client's share of YouTube units: a unit is spent for a client only within its share.

A *client* is who the edge says asks (``algebras.clients.CALLER``): the bearer token it presents
when the service knows that token (its hash, never the token), else its address, taken from
``X-Forwarded-For`` only behind as many trusted proxies as configured (``client_of``). Work with
no client (a refresh on a timer: the service's own) is not limited. The count is ``limits``'
fixed window (one counter a client a window; its memory storage in this process, its Redis
storage for every worker and host), so a share is at most its amount per window, whichever
worker spends it.

A refusal is remembered until its window ends (``ClientShares.spent``): a fixed window's count only
grows within it, so the client asking again is refused without asking the count (perf/RESULTS.md,
"Fair shares (issue 33)": what a refused request costs), and the per-video cache asks it before it
starts a call for the client at all.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Collection, Sequence

from limits import RateLimitItem
from limits.aio.strategies import RateLimiter
from limits.errors import StorageError
from returns.result import Failure, Result

from influencer_stats.algebras.clients import CALLER, Caller
from influencer_stats.algebras.youtube import QuotaSpending, VideosListCall
from influencer_stats.domain.models import (
    QuotaExhausted,
    SharedStateUnavailable,
    ShareSpent,
    StatsByVideo,
    UpstreamError,
    VideoId,
)
from influencer_stats.memo import BoundedMemo


def token_digest(token: str) -> str:
    """What a bearer token is known by: 32 hex digits of its SHA-256 (the token itself is never
    kept, counted under or logged)."""
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def client_of(caller: Caller, known_tokens: Collection[str], proxies: int) -> str:
    """Who ``caller`` is: ``token:<digest>`` for a bearer token in ``known_tokens`` (digests),
    else ``addr:<address>``: the ``proxies``-th address from the right of ``X-Forwarded-For``
    (the one the outermost trusted proxy saw; the header's first when it has fewer) behind
    ``proxies`` trusted proxies, else the peer's. A token the service does not know names no
    client: else each new token would be a new share."""
    authorization, peer, forwarded = caller
    if authorization and known_tokens:
        scheme, _, credentials = authorization.partition(" ")
        if scheme.lower() == "bearer" and (digest := token_digest(credentials.strip())) in known_tokens:
            return f"token:{digest}"
    if proxies and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if hops:
            return f"addr:{hops[max(0, len(hops) - proxies)]}"
    return f"addr:{peer or 'unknown'}"


class ClientShares:
    """Takes a unit of the asking client's share before it is spent (``take``).

    ``items`` are the shares (``limits``' items: ``1000/hour``, and ``3000/day`` beside it),
    each a fixed window per client counted by ``limiter``; a unit is taken from each in order and
    the first that has none left refuses (``ShareSpent``, a 429, with ``retry_after_s`` until its
    window ends, by ``clock``: the storage's wall time). A storage that does not answer refuses
    too (``SharedStateUnavailable``), as the quota's ledger does: no unit is spent uncounted.

    A refusal is kept (at most ``remembered`` clients, then forgotten all at once) until its
    window ends: until then the client is refused by ``spent`` and ``take`` without asking the
    count, which within a fixed window only grows (on Redis, two round trips spared per refusal).
    """

    def __init__(
        self,
        limiter: RateLimiter,
        items: Sequence[RateLimitItem],
        *,
        known_tokens: Collection[str],
        proxies: int,
        clock: Callable[[], float],
        remembered: int = 10_000,
    ) -> None:
        self._limiter = limiter
        self._items = tuple(items)
        self._known = frozenset(known_tokens)
        self._proxies = proxies
        self._clock = clock
        self._spent: BoundedMemo[str, tuple[float, RateLimitItem]] = BoundedMemo(remembered)

    def spent(self) -> ShareSpent | None:
        """The asking client's refusal while one seen here still holds (its window not ended),
        asking no count; None: not known to be spent (``take`` asks)."""
        caller = CALLER.get()
        return None if caller is None else self._still_spent(client_of(caller, self._known, self._proxies))

    async def take(self) -> UpstreamError | None:
        """A unit of the asking client's share taken (``None``: spend it), or why none was."""
        caller = CALLER.get()
        if caller is None:
            return None  # the service's own work
        client = client_of(caller, self._known, self._proxies)
        if (spent := self._still_spent(client)) is not None:
            return spent
        try:
            for item in self._items:
                if not await self._limiter.hit(item, "share", client):
                    reset_at, _ = await self._limiter.get_window_stats(item, "share", client)
                    self._spent.keep(client, (reset_at, item))
                    return _refusal(item, reset_at - self._clock())
        except StorageError:
            return SharedStateUnavailable(
                "the count of clients' shares did not answer; no YouTube call was made"
            )
        return None

    def _still_spent(self, client: str) -> ShareSpent | None:
        known = self._spent.get(client)
        if known is None:
            return None
        reset_at, item = known
        left_s = reset_at - self._clock()
        return _refusal(item, left_s) if left_s > 0 else None


def _refusal(item: RateLimitItem, left_s: float) -> ShareSpent:
    return ShareSpent(
        f"this client has spent its share of {item.amount:,} YouTube units per "
        f"{item.get_expiry():,} s; answers already cached stay free",
        retry_after_s=max(1, math.ceil(left_s)),
    )


class SharedCall:
    """``VideosListCall`` wrapper: a call is made only within the asking client's share (taken
    before the budget's unit, so a refused client spends none of the budget; not taken while the
    budget, as ``budget`` last saw it, has no unit left: ``inner`` refuses for it then)."""

    def __init__(self, inner: VideosListCall, shares: ClientShares, budget: QuotaSpending | None) -> None:
        self._inner = inner
        self._shares = shares
        self._budget = budget

    async def __call__(self, ids: Sequence[VideoId]) -> Result[StatsByVideo, UpstreamError]:
        if self._budget is None or self._budget.afford(1) is None:
            refused = await self._shares.take()
            if refused is not None:
                return Failure(refused)
        return await self._inner(ids)


class SharedSpending:
    """``QuotaSpending`` (a reader's pages): the client's share first, then the budget's unit
    (``inner``; None without a budget)."""

    def __init__(self, shares: ClientShares, inner: QuotaSpending | None) -> None:
        self._shares = shares
        self._inner = inner

    async def spend(self) -> UpstreamError | None:
        if self._inner is not None and self._inner.afford(1) is not None:
            return await self._inner.spend()  # the budget is spent: it refuses, no share taken
        refused = await self._shares.take()
        if refused is not None or self._inner is None:
            return refused
        return await self._inner.spend()

    def afford(self, units: int) -> QuotaExhausted | None:
        return None if self._inner is None else self._inner.afford(units)
