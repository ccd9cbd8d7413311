"""Interpreters for the contract suites, built through the composition root's registries.

A suite parametrized over ``SLOT.names()`` meets every registered interpreter by
construction: registering a name is enough for it to be tested. Each one is built
by the root's own builder against local doubles: every path an entry declares in
a temporary folder, the shared Redis (only for choices that declare they need it), the
YouTube double.
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import BinaryIO

from influencer_stats.bootstrap.root import open_wiring
from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.bootstrap.wiring import Wiring
from influencer_stats.config.resolve import resolve
from tests.declared_paths import redirected_paths
from tests.shared_redis import shared_redis_url, unique_prefix

#: The key the YouTube double requires, and the clients send.
KEY = "contract-test-key"


def _any_needs_redis(flags: Mapping[str, str]) -> bool:
    """Whether a name chosen in ``flags`` declares it needs Redis (``Entry.needs``)."""
    for slot, value in flags.items():
        registry = SLOTS[slot].registry if slot in SLOTS else None
        for name in value.split(","):
            if registry is not None and name in registry and "redis" in registry[name].needs:
                return True
    return False


@asynccontextmanager
async def wired(
    tmp_path: Path,
    flags: Mapping[str, str],
    *,
    youtube_url: str | None = None,
    stdout: BinaryIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> AsyncIterator[Wiring]:
    """The root's wiring for ``flags`` and ``environ`` (quiet: silent logger, no metrics, the fake
    client's counters still, unless a flag or ``environ`` says)."""
    environ = {
        **redirected_paths(tmp_path / "files"),
        "INFLUENCER_STATS_REDIS_PREFIX": unique_prefix(),
        "INFLUENCER_STATS_FAKE_GROWTH": "0",  # the synthetic counters, however long a case takes
        **(environ or {}),
    }
    if _any_needs_redis(flags):
        environ["REDIS_URL"] = shared_redis_url()
    if youtube_url is not None:
        # The double answers in milliseconds; a second per call (the default) failed a suite on two
        # busy cores. A case about timeouts sets its own.
        patient = {"INFLUENCER_STATS_UPSTREAM_TIMEOUT": "10", "INFLUENCER_STATS_UPSTREAM_DEADLINE": "20"}
        environ = {**patient, **environ, "YOUTUBE_API_URL": youtube_url, "YOUTUBE_API_KEY": KEY}
    settings = resolve(environ, {"logger": "silent", "metrics": "none", "video_client": "fake", **flags})
    async with open_wiring(settings, stdout or io.BytesIO()) as wiring:
        yield wiring
