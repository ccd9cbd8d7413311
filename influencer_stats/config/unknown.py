"""A misspelled ``INFLUENCER_STATS_*`` variable is not silently ignored: one line on stderr names the closest known one.

At start-up (``influencer-stats``, ``main.py``, ``influencer_stats.asgi``),
before the settings are resolved, on stderr rather than as a log event: the
logger is not built yet, and the line is for whoever typed the variable.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterator, Mapping
from typing import TextIO

from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.settings import PREFIX, declared


def known_variables() -> frozenset[str]:
    """Every variable the service reads: each setting's and each slot's."""
    return frozenset(spec.env for spec in declared().values()) | {slot.env for slot in SLOTS.values()}


def unknown_variables(environ: Mapping[str, str]) -> Iterator[str]:
    """One warning per ``INFLUENCER_STATS_*`` variable in ``environ`` that nothing reads, in name order."""
    known = known_variables()
    # Compared without the prefix they share, which would make any two look alike; a variable
    # without it (REDIS_URL) is found by its whole name (INFLUENCER_STATS_REDIS_URL).
    by_tail = {variable.removeprefix(PREFIX): variable for variable in sorted(known)}
    for name in sorted(v for v in environ if v.startswith(PREFIX) and v not in known):
        close = difflib.get_close_matches(name.removeprefix(PREFIX), by_tail, n=1, cutoff=0.6)
        hint = f"; did you mean {by_tail[close[0]]}?" if close else " (influencer-stats --help lists them)"
        yield f"influencer-stats: warning: {name[:80]} is not a setting, ignored{hint}"


def warn_unknown_variables(environ: Mapping[str, str], stream: TextIO | None = None) -> None:
    """Print ``unknown_variables(environ)``, one line each, to ``stream`` (stderr)."""
    for line in unknown_variables(environ):
        print(line, file=stream or sys.stderr, flush=True)
