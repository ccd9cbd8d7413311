"""A clock that moves only when a test moves it."""

from __future__ import annotations


class ManualClock:
    """Callable like ``time.monotonic``; tests set or advance ``now``."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
