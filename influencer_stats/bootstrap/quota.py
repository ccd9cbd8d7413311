"""The ``quota`` slot: what the service asks of the day's YouTube budget, and ``none``, which counts nothing.

The slot's choice builds one ``Quota`` early (after tracing, before the metrics, which show its
budget); the root and the slices then ask it, never naming a choice: the YouTube base for its
``videos.list`` call under the governor (``governed``), the readers of playlists and channels for
the process's one spender (``quota_spender``), the per-video caches how much to stretch freshness
(``stretch``) and whether a call for the client asking would be refused now (``refused``),
background passes whether the budget runs short (``short``: ``parts.quota_short``).
This base class, ``none`` (the slot's default), answers as if there were no budget: nothing is
spent, nothing counted, no call refused. The budget and its ledgers (``memory``, ``redis``) are the
``quota`` slice's (``bootstrap/slices/quota.py``): the core never names them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from influencer_stats.bootstrap.registry import Registry

if TYPE_CHECKING:
    from influencer_stats.algebras.youtube import QuotaSpending, VideosListCall
    from influencer_stats.bootstrap.wiring import Resources, Wiring
    from influencer_stats.domain.models import UpstreamError


class Quota:
    """What the ``quota`` choice built: the day's budget as the rest of the service asks it. This
    one, no budget, answers each with what it was given: nothing is spent or counted, no layer is
    built. A choice that counts subclasses it (``bootstrap/slices/quota.py``)."""

    __slots__ = ()

    def units(self) -> int | None:
        """The units this deployment may spend per quota day (None: no budget; ``/metrics`` shows none)."""
        return None

    def short(self) -> bool:
        """Whether spending runs ahead of the day: background work that would spend units waits."""
        return False

    def stretch(self) -> float:
        """The factor by which caches stretch freshness now (1 = not at all)."""
        return 1.0

    def refused(self) -> UpstreamError | None:
        """Why a call made now for the request being answered would be refused, when that is
        known without asking any count (a client's share seen spent: the ``shares`` slice); None:
        not known, the call asks as usual. The per-video cache asks it before starting a call."""
        return None

    async def spender(self, wiring: Wiring) -> QuotaSpending | None:
        """The process's one spender of the budget, shared by every kind of YouTube call; None
        without a budget (the readers then spend nothing)."""
        return None

    async def governed(self, wiring: Wiring, call: VideosListCall) -> VideosListCall:
        """``call`` spending a unit of the budget first, last before the network (``call`` itself
        without a budget)."""
        return call


#: No budget: nothing spent, nothing counted.
NO_QUOTA = Quota()

QuotaBuilder = Callable[["Resources"], Awaitable[Quota]]
QUOTAS: Registry[QuotaBuilder] = Registry("quota")
#: What slices put around the ``Quota`` the choice built, in order, before anything asks it (the
#: ``shares`` slice: each client's share of the units, checked before a unit is spent).
QuotaLayer = Callable[["Resources", Quota], Awaitable[Quota]]
QUOTA_LAYERS: list[QuotaLayer] = []


@QUOTAS.add("none", "no budget: YouTube calls spend no unit and are counted nowhere")
async def _none(_: Resources) -> Quota:
    return NO_QUOTA


async def quota_spender(wiring: Wiring) -> QuotaSpending | None:
    """The process's one spender of the day's budget (what the ``quota`` choice built), or None."""
    return await wiring.quota.spender(wiring)
