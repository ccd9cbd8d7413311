"""State another worker would not see, for one choice of one slot: two instances built from the
same settings, as two worker processes build them, either share it, or the entry declares it kept
per process and ``--workers 2`` is refused (``tests/integration/test_per_process.py`` runs it for
the core's slots; a slice's tests run it for its own)."""

from __future__ import annotations

import io
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

import pytest

from influencer_stats.bootstrap.root import open_wiring
from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.bootstrap.wiring import Wiring
from influencer_stats.config.resolve import ConfigError, resolve
from tests.declared_paths import redirected_paths
from tests.needs import resolve_needing

#: Whether what one instance did is seen by the other.
Shares = Callable[[Wiring, Wiring], Awaitable[bool]]


def _refusal(environ: Mapping[str, str], flags: Mapping[str, str]) -> str | None:
    try:
        resolve(environ, flags)
    except ConfigError as error:
        return str(error)
    return None


async def assert_shared_or_declared(
    slot: str,
    name: str,
    shares: Shares,
    base: Mapping[str, str],
    tmp_path: Path,
    request: pytest.FixtureRequest,
    variables: Mapping[str, str] | None = None,
) -> None:
    """``name`` of ``slot``, with the choices ``base`` (and the environment's ``variables``): its
    two instances share what ``shares`` looks at, or its entry declares ``per_process`` and
    ``--workers 2`` is refused for it."""
    environ = {
        **redirected_paths(tmp_path / "files"),  # one file for both instances, as for two workers
        "YOUTUBE_API_URL": "http://127.0.0.1:9/youtube/v3/videos",  # never called
        **(variables or {}),
    }
    flags = {"logger": "silent", "metrics": "none", **base, slot: name}
    settings = resolve_needing(request, environ, flags)  # Redis only when a choice needs it
    async with open_wiring(settings, io.BytesIO()) as one, open_wiring(settings, io.BytesIO()) as two:
        shared = await shares(one, two)

    entry = SLOTS[slot].registry[name]
    refused = _refusal(environ, {**flags, "workers": "2"})
    this_choice = f"{slot.replace('_', ' ')} {name!r} "  # the refusal is this choice's, no other slot's
    if entry.per_process is None:
        assert shared or (refused or "").startswith(this_choice), (
            f"another worker would not see it and --workers 2 is not refused for it ({refused}):"
            " declare per_process=(what, instead)"
        )
    else:
        what, instead = entry.per_process[0], SLOTS[slot].instead(name)
        assert not shared, "two instances share it: it keeps nothing per process"
        assert refused == f"{this_choice}keeps {what} in each process: with --workers 2 use {instead}"
