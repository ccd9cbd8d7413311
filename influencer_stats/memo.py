"""A bounded memo: a dict that starts over once it is full."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedMemo(dict[K, V]):
    """Values cheap to recompute and asked for again and again, at most ``limit`` of them.

    Read it as a dict (``memo.get(key)``: the hot path pays a dict lookup, nothing
    more); store with :meth:`keep`, which first starts over from ``base`` once
    ``limit`` entries are held. Forgetting everything at once costs less per call
    than least-recently-used bookkeeping, and whatever the keys (clients may choose
    them) the memory stays bounded.
    """

    __slots__ = ("_base", "_limit")

    def __init__(self, limit: int, base: Mapping[K, V] | None = None) -> None:
        super().__init__(base or {})
        self._base = dict(base or {})
        self._limit = len(self._base) + limit

    def keep(self, key: K, value: V) -> V:
        """Remember ``value`` for ``key`` (after starting over if full) and return it."""
        if len(self) >= self._limit:
            self.clear()
            self.update(self._base)
        self[key] = value
        return value
