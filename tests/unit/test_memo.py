"""The bounded memo: read as a dict, starts over from its base once full."""

from __future__ import annotations

from influencer_stats.memo import BoundedMemo


def test_it_keeps_values_until_full_then_starts_over_from_its_base() -> None:
    memo: BoundedMemo[str, int] = BoundedMemo(2, base={"static": 0})

    assert memo.keep("a", 1) == 1
    memo.keep("b", 2)
    assert memo == {"static": 0, "a": 1, "b": 2}  # the base does not count against the limit

    memo.keep("c", 3)

    assert memo == {"static": 0, "c": 3}
    assert memo.get("a") is None


def test_without_a_base_it_never_holds_more_than_its_limit() -> None:
    memo: BoundedMemo[int, int] = BoundedMemo(100)
    for n in range(1_000):
        memo.keep(n, n)
        assert len(memo) <= 100
    assert memo[999] == 999
