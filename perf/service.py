"""The service under test as a process: its command line and its environment."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Final

import httpx

from influencer_stats.settings import PREFIX
from perf.procs import PYTHON
from perf.profiles import stand_ins

OVERRIDE_PREFIX: Final = PREFIX
"""The service's settings in the environment; the lab drops the caller's, so profiles run as declared."""


def main_argv(profile: str, port: int, overrides: Sequence[tuple[str, str]] = ()) -> list[str]:
    """``python main.py --profile PROFILE [--slot choice ...] --port PORT``.

    ``overrides`` are ``(slot, choice)`` pairs (see :func:`perf.specs.split_spec`). Run it
    in the repository (:func:`perf.procs.start` does); the interpreter is named as
    :data:`perf.procs.PYTHON` names it.
    """
    flags = [part for slot, choice in overrides for part in ("--" + slot.replace("_", "-"), choice)]
    return [PYTHON, "main.py", "--profile", profile, *flags, "--port", str(port)]


def installed_argv(profile: str, port: int, overrides: Sequence[tuple[str, str]] = ()) -> list[str]:
    """:func:`main_argv` with ``profile`` run on what is installed: each choice of it not installed
    given its slot's first (:func:`perf.profiles.stand_ins`; none with every slice), then ``overrides``."""
    return main_argv(profile, port, [*stand_ins(profile), *overrides])


def ignored_settings() -> list[str]:
    """The ``INFLUENCER_STATS_*`` variables of this environment that :func:`service_env` drops."""
    return sorted(k for k in os.environ if k.startswith(OVERRIDE_PREFIX))


def service_env(youtube_url: str, api_key: str, settings: Mapping[str, str] | None = None) -> dict[str, str]:
    """This environment without its ``INFLUENCER_STATS_*`` settings, pointed at a YouTube double,
    with no quota budget and no snapshots.

    ``settings`` (the lab's own ``INFLUENCER_STATS_*`` values, say) are set last.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(OVERRIDE_PREFIX)}
    env.update(YOUTUBE_API_URL=youtube_url, YOUTUBE_API_KEY=api_key)
    # The lab measures speed: a daily budget would turn the uncached runs into 503s within a second.
    env.update(INFLUENCER_STATS_QUOTA_PER_DAY="0")
    # Snapshots and refreshes (hourly and daily in youtube and distributed) would call YouTube when
    # their interval turns inside a run, and the soak counts units spent: the lab measures requests.
    env.update(INFLUENCER_STATS_SNAPSHOT_INTERVAL="0", INFLUENCER_STATS_SOURCE_REFRESH_INTERVAL="0")
    env.update(settings or {})
    return env


def pooled(max_connections: int) -> httpx.Limits:
    """A client's pool for the service. The service closes a connection idle for
    ``INFLUENCER_STATS_KEEPALIVE`` (5 s) and httpx keeps one 5 s too, so a request sent on one
    at 4.99 s met the close (``ReadError``, in CI): ours give an idle connection up after 1 s."""
    return httpx.Limits(max_connections=max_connections, keepalive_expiry=1.0)
