"""The house rule on module sizes: no module over 350 lines in ``influencer_stats/`` (nor in
``youtube_double/``, which left it), none over 400 in ``perf/`` and ``tests/``. No exceptions: a module that grows past its limit is split by
concern (as ``perf/guarded.py`` was into its app, its answers and its videos.list calls).
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Each tree and the most lines a module in it may have.
LIMITS = {"influencer_stats": 350, "youtube_double": 350, "perf": 400, "tests": 400}


def _modules(tree: str) -> list[Path]:
    return sorted(path for path in (ROOT / tree).rglob("*.py") if "__pycache__" not in path.parts)


@pytest.mark.parametrize(("tree", "limit"), LIMITS.items())
def test_no_module_is_over_its_trees_line_limit(tree: str, limit: int) -> None:
    modules = _modules(tree)
    over = [
        f"{path.relative_to(ROOT)} has {lines} lines, over the {limit} allowed in {tree}/: split it by concern"
        for path in modules
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > limit
    ]

    assert modules, f"no module found under {tree}/"  # a moved tree must not pass unread
    assert over == [], "\n".join(over)
