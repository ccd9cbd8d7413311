"""``Resources.background``: a task run until the service stops, then cancelled and awaited, and
that close always ends, even when the task swallows a cancel (Python 3.11's ``asyncio.wait_for``
does when what it waited for completes as the cancel comes: redis-py awaits every command's write
with it, so a ``watch_dependencies`` loop's PING swallowed the close's cancel and the close hung)."""

from __future__ import annotations

import asyncio
import io
from contextlib import AsyncExitStack

import pytest

from influencer_stats.bootstrap import wiring
from influencer_stats.bootstrap.wiring import Resources
from influencer_stats.setting_kinds import Choices
from influencer_stats.settings import Settings


def _resources(exits: AsyncExitStack) -> Resources:
    return Resources(Settings(choices=Choices({})), exits, {}, io.BytesIO())


async def _swallowing(cancels: int, seen: list[str]) -> None:
    """Goes on after its first ``cancels`` cancels, as a loop around a swallowing ``wait_for`` does."""
    for _ in range(cancels):
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen.append("swallowed")
    await asyncio.Event().wait()


async def test_a_background_task_that_swallows_a_cancel_is_cancelled_again_and_the_close_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(wiring, "CANCEL_AGAIN_S", 0.01)
    seen: list[str] = []
    async with AsyncExitStack() as exits:
        _resources(exits).background(_swallowing(2, seen), "swallows-twice")
        await asyncio.sleep(0)  # it runs
        [task] = [t for t in asyncio.all_tasks() if t.get_name() == "swallows-twice"]

    assert task.cancelled()
    assert seen == ["swallowed", "swallowed"]


async def test_a_background_task_that_never_ends_fails_the_close_after_the_last_cancel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(wiring, "CANCEL_AGAIN_S", 0.01)
    seen: list[str] = []
    exits = AsyncExitStack()
    _resources(exits).background(_swallowing(wiring.CANCELS, seen), "deaf")
    await asyncio.sleep(0)
    [task] = [t for t in asyncio.all_tasks() if t.get_name() == "deaf"]

    with pytest.raises(RuntimeError, match="background task deaf still runs after 10 cancels"):
        await exits.aclose()

    assert seen == ["swallowed"] * wiring.CANCELS
    task.cancel()  # the one more it ends on
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_background_task_that_failed_fails_the_close_with_its_error() -> None:
    async def failing() -> None:
        raise ValueError("broken")

    exits = AsyncExitStack()
    _resources(exits).background(failing(), "failing")
    await asyncio.sleep(0)

    with pytest.raises(ValueError, match="broken"):
        await exits.aclose()
