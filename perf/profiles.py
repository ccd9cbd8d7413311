"""The service's profiles and slot choices, as the perf lab sees them.

The only module of perf/ that imports :mod:`influencer_stats.config`: the rest
of the lab asks these functions, in plain strings and dicts, so a change in how
the service declares its profiles and choices is adapted here alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.config.profiles import PROFILES
from influencer_stats.config.resolve import resolve, resolve_choices
from influencer_stats.settings import Settings, declared

#: Where the profile names come from, for messages that send the user there.
PROFILES_SOURCE: Final = "influencer_stats.config.profiles.PROFILES"


def profile_names() -> list[str]:
    """Every profile ``main.py --profile`` accepts, in declaration order."""
    return list(PROFILES)


def slot_names() -> list[str]:
    """Every slot a profile fills (``server``, ``video_client``, ...), in declaration order."""
    return list(SLOTS)


def choices_of(profile: str) -> dict[str, str]:
    """Slot -> choice of ``profile`` as a user writes it, in :func:`slot_names` order; KeyError if unknown."""
    choices, _ = resolve_choices(PROFILES[profile], {}, {})
    return {slot: choices.text(slot) for slot in slot_names()}


def valid_choice(slot: str, name: str) -> bool:
    """Whether ``name`` is a registered choice for ``slot`` (False for an unknown slot)."""
    if slot not in SLOTS:
        return False
    try:
        SLOTS[slot].parse(name)
    except ValueError:
        return False
    return True


def lab_settings() -> frozenset[str]:
    """Settings a spec may override besides slots (``fast+workers=2``): those with a flag, bar the lab's own."""
    return frozenset(name for name, spec in declared().items() if spec.flag) - {"profile", "host", "port"}


def service_settings(environ: Mapping[str, str], profile: str = "fast") -> Settings:
    """What ``main.py --profile PROFILE`` resolves from ``environ``: the numbers :mod:`perf.guarded` runs with
    (timeouts, cache windows, limits, log level and rate), so it keeps the service's guarantees to the letter."""
    return resolve(environ, {"profile": profile})


def _service_settings() -> Settings:
    """The settings a lab service runs with: the defaults (the lab drops every ``INFLUENCER_STATS_*``)."""
    return resolve({"YOUTUBE_API_KEY": "perf"}, {"profile": "fast"})


def granian_flags() -> list[str]:
    """The service's Granian settings as :mod:`perf.rsgi_ceiling`'s flags (for it and :mod:`perf.minimal`):
    what ``influencer_stats.servers.granian.runner.run`` gives ``Granian(...)``, from the same function."""
    from influencer_stats.servers.granian.runner import granian_options

    options = granian_options(_service_settings())
    return [part for name, value in options.items() for part in (f"--{name}", str(value))]


def client_settings() -> dict[str, float]:
    """The ``aiohttp-batched`` client's pool, per-call timeout and calls in flight per request."""
    s = _service_settings()
    return {
        "pool": s.upstream_connections,
        "call_timeout_s": s.upstream_call_timeout_s,
        "concurrency": s.upstream_concurrency,
    }
