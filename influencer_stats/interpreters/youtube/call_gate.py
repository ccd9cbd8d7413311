"""Shares of the YouTube connections: one request's hundred calls cannot starve another's one.

A stats request of 5,000 ids makes 100 ``videos.list`` calls; with one
first-come-first-served queue in front of the connections, twenty such
requests made a one-video request wait behind 2,000 calls (504 at 2 s,
against 0.11 s alone). Here each request is a *flow*, and when a connection
frees, the flow with the fewest calls waiting takes it: a one-video request
goes before a 5,000-video one, and of two big ones the one nearer its end
finishes first, rather than both late (taking turns would make every big
request miss its deadline together once they need more than it).
"""

from __future__ import annotations

import asyncio
from collections import deque
from contextvars import ContextVar, Token
from types import TracebackType


class Flow:
    """A request's calls at the gate: compared by identity."""

    __slots__ = ()


#: The flow of the calls made in this context: a stats request's, inherited by every task it
#: starts (asyncio copies the context into a task when it is created). None: no request's.
_FLOW: ContextVar[Flow | None] = ContextVar("influencer_stats_upstream_flow", default=None)


class own_flow:  # noqa: N801 - used as the function it was: ``with own_flow():``
    """Calls made from here on (in this task, and in tasks it starts meanwhile) are one flow.

    Entered where a request meets the video sources: by whichever layer bounds its wait.
    """

    # A class, not @contextmanager: no generator per request (perf/RESULTS.md, "The `guarded`
    # reference", item 1: part of DeadlineSource's 4.1 µs).
    __slots__ = ("_token",)

    def __enter__(self) -> None:
        self._token: Token[Flow | None] = _FLOW.set(Flow())

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        _FLOW.reset(self._token)


def current_flow() -> Flow | None:
    """The flow calls made now belong to."""
    return _FLOW.get()


class CallGate:
    """At most ``slots`` calls at once; when one frees, the flow with the fewest calls waiting goes.

    - A flow holds at most ``per_flow`` slots at once (a request's calls in
      flight), and takes a free slot at once while under that.
    - When a slot frees, of the flows with calls waiting that hold less than
      their share, the one with the fewest calls waiting takes it (its oldest
      call); ties go to the flow that started waiting first. The shortest
      waiting work first: a small request's latency stays that of a few
      calls however big the others are.
    - At most ``max_waiting`` calls wait: ``enter`` answers False beyond, at
      once (the caller fails the call; nothing is queued without bound).
    - A waiting call that is cancelled leaves its place (or the slot it was
      just handed) to the next.

    Every slot entered must be left (``leave``), once. Not thread-safe; one event loop.
    """

    def __init__(self, slots: int, *, per_flow: int, max_waiting: int) -> None:
        if slots < 1 or per_flow < 1 or max_waiting < 0:
            raise ValueError("slots and per_flow must be >= 1, max_waiting >= 0")
        self._free = slots
        self._per_flow = per_flow
        self._max_waiting = max_waiting
        self._held: dict[object | None, int] = {}  # slots held, by flow
        # The flows with calls waiting, in the order they started waiting.
        self._waiters: dict[object | None, deque[asyncio.Future[None]]] = {}
        self._waiting = 0
        self._freed: list[asyncio.Future[None]] = []  # told when a slot is next given back

    @property
    def waiting(self) -> int:
        """Calls waiting for a slot now."""
        return self._waiting

    def busy(self) -> bool:
        """Whether a call made now would wait: no free slot, or calls waiting already."""
        return not self._free or self._waiting > 0

    def freed(self) -> asyncio.Future[None]:
        """Done when a slot is next given back, the turn a call entering now would wait for at
        most if its flow goes first (at once if the gate is not ``busy``); cancelling it is fine."""
        future = asyncio.get_running_loop().create_future()
        if not self.busy():
            future.set_result(None)
        else:
            self._freed = [f for f in self._freed if not f.done()]  # as many as wait now, no more
            self._freed.append(future)
        return future

    def _tell_freed(self) -> None:
        for future in self._freed:
            if not future.done():
                future.set_result(None)
        self._freed = []

    def try_enter(self, flow: object | None) -> bool:
        """Take a slot for ``flow`` if one is free to take now (no waiting, no coroutine); else False.

        What a caller tries first: ``enter`` is awaited only when the pool is contested
        (perf/RESULTS.md, "The `guarded` reference", item 1: the gate's bookkeeping).
        """
        held = self._held.get(flow, 0)
        if self._free and held < self._per_flow:  # a free slot is one no waiting call may take
            self._free -= 1
            self._held[flow] = held + 1
            return True
        return False

    async def enter(self, flow: object | None) -> bool:
        """Wait for a slot for ``flow``: True once held; False at once when ``max_waiting`` wait."""
        if self.try_enter(flow):
            return True
        if self._waiting >= self._max_waiting:
            return False
        turn = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(flow, deque()).append(turn)
        self._waiting += 1
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():  # handed a slot as it was cancelled: pass it on
                self.leave(flow)
            else:
                self._forget(flow, turn)
            raise
        return True

    def leave(self, flow: object | None) -> None:
        """Give back a slot ``flow`` holds; the next flow takes it."""
        held = self._held[flow] - 1
        if held:
            self._held[flow] = held
        else:
            del self._held[flow]
        self._free += 1
        self._hand_over()
        if self._freed:
            self._tell_freed()

    def _hand_over(self) -> None:
        waiters, held, share = self._waiters, self._held, self._per_flow
        while self._free and waiters:
            eligible = (flow for flow in waiters if held.get(flow, 0) < share)
            flow = min(eligible, key=lambda f: len(waiters[f]), default=_NONE)  # first of the shortest
            if flow is _NONE:
                return  # every flow waiting holds its share
            queue = waiters[flow]
            turn = queue.popleft()
            self._waiting -= 1
            if not queue:
                del waiters[flow]
            if turn.cancelled():  # its task is on its way out; _forget finds it gone
                continue
            self._free -= 1
            held[flow] = held.get(flow, 0) + 1
            turn.set_result(None)

    def _forget(self, flow: object | None, turn: asyncio.Future[None]) -> None:
        queue = self._waiters.get(flow)
        if queue is None or turn not in queue:
            return  # _hand_over already dropped it
        queue.remove(turn)
        self._waiting -= 1
        if not queue:
            del self._waiters[flow]


_NONE = object()  # no flow (None is a flow: calls made outside any request)
