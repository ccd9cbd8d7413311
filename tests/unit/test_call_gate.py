"""The call gate: the request with the fewest calls waiting goes next; waiting is bounded. No sleeps."""

from __future__ import annotations

import asyncio

import pytest

from influencer_stats.interpreters.youtube.call_gate import CallGate, current_flow, own_flow


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


class Calls:
    """Tasks entering ``gate`` for a flow each, recording the order in which they got a slot."""

    def __init__(self, gate: CallGate) -> None:
        self.gate = gate
        self.order: list[str] = []
        self.tasks: list[asyncio.Task[bool]] = []

    def start(self, flow: str, count: int = 1) -> None:
        for n in range(count):
            self.tasks.append(asyncio.create_task(self._enter(flow, f"{flow}{n}")))

    async def _enter(self, flow: str, name: str) -> bool:
        entered = await self.gate.enter(flow)
        if entered:
            self.order.append(name)
        return entered


async def test_a_free_slot_is_taken_at_once_and_a_call_beyond_the_slots_waits() -> None:
    gate = CallGate(2, per_flow=16, max_waiting=10)
    calls = Calls(gate)

    calls.start("a", 3)
    await settle()

    assert calls.order == ["a0", "a1"]
    assert gate.waiting == 1
    gate.leave("a")
    await settle()
    assert calls.order == ["a0", "a1", "a2"]
    assert gate.waiting == 0


async def test_the_gate_is_busy_while_no_slot_is_free_or_calls_wait() -> None:
    gate = CallGate(2, per_flow=1, max_waiting=10)
    calls = Calls(gate)
    assert not gate.busy()

    calls.start("a")
    await settle()
    assert not gate.busy()  # a slot is free
    calls.start("a")  # a holds its share: this one waits though a slot is free
    await settle()
    assert gate.busy()
    calls.start("b")  # takes the free slot; a's call still waits
    await settle()
    assert gate.busy()
    gate.leave("a")
    await settle()
    assert gate.busy()  # no slot free
    gate.leave("a")
    await settle()
    assert not gate.busy()


async def test_freed_is_told_when_a_slot_is_next_given_back_and_at_once_when_not_busy() -> None:
    gate = CallGate(1, per_flow=1, max_waiting=10)
    calls = Calls(gate)
    assert gate.freed().done()  # not busy: at once

    calls.start("a", 2)
    await settle()
    freed = gate.freed()
    assert not freed.done()
    gate.leave("a")  # handed to the waiting call, but given back: the turn a new flow would take
    assert freed.done()
    assert not gate.freed().done()  # busy again until the next one


async def test_a_request_arriving_behind_another_ones_hundred_calls_is_served_next() -> None:
    gate = CallGate(4, per_flow=16, max_waiting=200)
    calls = Calls(gate)
    calls.start("big", 100)
    await settle()
    calls.start("small")
    await settle()
    assert calls.order == ["big0", "big1", "big2", "big3"]

    gate.leave("big")  # one connection frees: the small request's, not the 5th big call's
    await settle()

    assert calls.order[-1] == "small0"


async def test_the_flow_with_the_fewest_calls_waiting_goes_first_and_of_equals_the_earlier() -> None:
    gate = CallGate(1, per_flow=16, max_waiting=200)
    calls = Calls(gate)
    calls.start("a", 4)  # a0 takes the slot; 3 wait
    calls.start("b", 3)
    calls.start("c", 2)
    await settle()

    for _ in range(8):
        gate.leave(calls.order[-1][0])
        await settle()

    # c (2 waiting) first, then a and b, 3 each: a started waiting first, and once it is
    # served it has fewer left, so it finishes before b begins (not both late).
    assert calls.order == ["a0", "c0", "c1", "a1", "a2", "a3", "b0", "b1", "b2"]


async def test_a_flow_holds_at_most_its_share_and_other_flows_take_the_free_slots() -> None:
    gate = CallGate(8, per_flow=3, max_waiting=200)
    calls = Calls(gate)

    calls.start("a", 10)
    await settle()
    assert calls.order == ["a0", "a1", "a2"]

    calls.start("b", 2)
    await settle()
    assert calls.order == ["a0", "a1", "a2", "b0", "b1"]

    gate.leave("a")  # a is under its share again: its next call takes the freed slot
    await settle()
    assert calls.order[-1] == "a3"
    assert gate.waiting == 6


async def test_past_the_waiting_bound_a_call_is_refused_at_once() -> None:
    gate = CallGate(1, per_flow=1, max_waiting=2)
    calls = Calls(gate)
    calls.start("a", 3)
    await settle()

    refused = await gate.enter("b")

    assert refused is False
    assert gate.waiting == 2


async def test_a_cancelled_waiting_call_leaves_its_place_to_the_next() -> None:
    gate = CallGate(1, per_flow=1, max_waiting=10)
    calls = Calls(gate)
    calls.start("a", 1)
    calls.start("b", 1)
    calls.start("c", 1)
    await settle()

    calls.tasks[1].cancel()  # b gives up while waiting
    await settle()
    gate.leave("a")
    await settle()

    assert calls.order == ["a0", "c0"]
    assert gate.waiting == 0


async def test_a_call_cancelled_just_as_it_was_handed_a_slot_passes_the_slot_on() -> None:
    gate = CallGate(1, per_flow=1, max_waiting=10)
    calls = Calls(gate)
    calls.start("a", 1)
    calls.start("b", 1)
    calls.start("c", 1)
    await settle()

    gate.leave("a")  # hands the slot to b ...
    calls.tasks[1].cancel()  # ... which is cancelled before it runs again
    await settle()

    assert calls.order == ["a0", "c0"]
    with pytest.raises(asyncio.CancelledError):
        await calls.tasks[1]


async def test_calls_made_in_a_flow_and_in_the_tasks_it_starts_share_it_and_others_do_not() -> None:
    async def flow_of_a_task() -> object | None:
        return current_flow()

    outside = current_flow()
    with own_flow():
        mine = current_flow()
        started_inside = asyncio.create_task(flow_of_a_task())
    with own_flow():
        other = current_flow()

    assert outside is None
    assert mine is not None and other is not None and mine is not other
    assert await started_inside is mine
    assert current_flow() is None
