"""Profiles: named, declarative bundles of interpreter choices.

A profile names a choice for each base slot it cares about; a slot it leaves
out takes the slot's default, and a wrapper slot it leaves out takes the
wrappers the chosen base normally runs with (the circuit breaker around a real
YouTube client, the rate limit under ``dropping``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Profile:
    """A named bundle of choices, with a sentence for ``--list-profiles``; ``settings`` are
    defaults of its own for settings (``Settings`` field names), below the environment's."""

    name: str
    description: str
    choices: Mapping[str, str]
    settings: Mapping[str, str]


def _profile(
    name: str, description: str, settings: Mapping[str, str] | None = None, **choices: str
) -> Profile:
    return Profile(name, description, choices, settings or {})


#: The profiles that keep a stats history by default: a snapshot an hour, and the collections
#: read from a playlist or channel read again once a day.
_TIMELINES = {"snapshot_interval_s": "3600", "source_refresh_interval_s": "86400"}


PROFILES: Final[Mapping[str, Profile]] = {
    p.name: p
    for p in (
        _profile(
            "demo",
            "default, offline: fake YouTube, the store's default (durable, with its slice), dropping logger",
            server="starlette",
            video_client="fake",
            logger="dropping",
        ),
        _profile(
            "v1",
            "the talk's v1: log everything, list store, httpx call per video",
            server="starlette",
            video_client="httpx",
            store="list",
            logger="all",
        ),
        _profile(
            "v2",
            "v1 with a logger that drops above 1,000 events/s",
            server="starlette",
            video_client="httpx",
            store="list",
            logger="dropping",
        ),
        _profile(
            "v3",
            "v2 with another HTTP client: aiohttp, still one call per video",
            server="starlette",
            video_client="aiohttp",
            store="list",
            logger="dropping",
        ),
        _profile(
            "v4",
            "v3 with statistics cached (TTL, single-flight, stale-while-revalidate)",
            server="starlette",
            video_client="aiohttp",
            store="list",
            logger="dropping",
            cache="stats",
        ),
        _profile(
            "v5",
            "v4 with another HTTP server: Granian (Rust) through RSGI",
            server="granian",
            video_client="aiohttp",
            store="list",
            logger="dropping",
            cache="stats",
        ),
        _profile(
            "fast",
            "everything measured fastest: dict store, batched aiohttp, cache, Granian",
            server="granian",
            video_client="aiohttp-batched",
            store="dict",
            logger="dropping",
            cache="stats",
        ),
        _profile(
            "distributed",
            "shared state for many workers/hosts: Redis store, stats and video caches, one quota count",
            _TIMELINES,
            server="asgi",
            video_client="aiohttp-batched",
            store="redis",
            logger="dropping",
            cache="near,redis",
            video_cache="redis",
            video_wrappers="batch,breaker",
            quota="redis",
        ),
        _profile(
            "youtube",
            "the real YouTube Data API (needs YOUTUBE_API_KEY): stats and video caches, batching save quota",
            _TIMELINES,
            server="starlette",
            video_client="aiohttp-batched",
            logger="dropping",
            cache="stats",
            video_cache="memory",
            video_wrappers="batch,breaker",
        ),
    )
}
