"""The service's profiles and slot choices, as the perf lab sees them.

The only module of perf/ that imports :mod:`influencer_stats.config`: the rest
of the lab asks these functions, in plain strings and dicts, so a change in how
the service declares its profiles and choices is adapted here alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from importlib import import_module
from typing import Final

from influencer_stats.bootstrap.registry import NONE
from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.bootstrap.videos import batches
from influencer_stats.config.profiles import PROFILES
from influencer_stats.config.resolve import resolve, resolve_choices
from influencer_stats.interpreters.youtube.youtube_api import MAX_IDS_PER_CALL
from influencer_stats.settings import Settings, declared

#: Where the profile names come from, for messages that send the user there.
PROFILES_SOURCE: Final = "influencer_stats.config.profiles.PROFILES"


def profile_names() -> list[str]:
    """Every profile the service declares, in declaration order: one naming a removed slice's
    choice (not ``config.resolve.offered``) is still a spec here; ``main.py`` refuses it when run."""
    return list(PROFILES)


def slot_names() -> list[str]:
    """Every slot a profile fills (``server``, ``video_client``, ...), in declaration order."""
    return list(SLOTS)


def choices_of(profile: str) -> dict[str, str]:
    """Slot -> choice of ``profile`` as a user writes it, in :func:`slot_names` order; KeyError if unknown."""
    declared = PROFILES[profile]
    stand_ins = _stand_ins(profile)  # to resolve the rest; each shown as declared
    choices, _ = resolve_choices(replace(declared, choices={**declared.choices, **stand_ins}), {}, {})
    return {
        slot: declared.choices[slot] if slot in stand_ins else choices.text(slot) for slot in slot_names()
    }


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
    (timeouts, cache windows, limits, log level and rate), so it keeps the service's guarantees to the letter;
    a choice of PROFILE that is not installed stands in for by its slot's first (they set no number)."""
    return resolve(environ, {"profile": profile, **_stand_ins(profile)})


def _service_settings() -> Settings:
    """The settings a lab service runs with: the defaults (the lab drops every ``INFLUENCER_STATS_*``);
    a choice of ``fast`` that is not installed stands in for by its slot's first (they set no number)."""
    return resolve({"YOUTUBE_API_KEY": "perf"}, {"profile": "fast", **_stand_ins("fast")})


def stand_ins(profile: str) -> list[tuple[str, str]]:
    """``(slot, choice)`` overrides (:func:`perf.service.main_argv`'s) that run ``profile`` on what is
    installed: its slot's first choice for each choice of it not installed (a slice removed)."""
    return list(_stand_ins(profile).items())


def _stand_ins(profile: str) -> dict[str, str]:
    """Slot -> its first choice, for each choice of ``profile`` not installed (a slice removed)."""
    declared = PROFILES[profile].choices
    return {
        slot: SLOTS[slot].names()[0] for slot, choice in declared.items() if not valid_choice(slot, choice)
    }


def granian_flags() -> list[str]:
    """The service's Granian settings as :mod:`perf.rsgi_ceiling`'s flags (for it and :mod:`perf.minimal`):
    what the granian server's runner gives ``Granian(...)``, from the same function. None when no
    server ``granian`` is installed (its slice removed): the references' defaults, the same ones."""
    servers = SLOTS["server"].registry
    if "granian" not in servers:
        return []
    runner = import_module(f"{servers['granian'].build}.runner")
    options: Mapping[str, object] = runner.granian_options(_service_settings())
    return [part for name, value in options.items() for part in (f"--{name}", str(value))]


def client_settings() -> dict[str, float]:
    """The ``aiohttp-batched`` client's pool, per-call timeout and calls in flight per request."""
    s = _service_settings()
    return {
        "pool": s.upstream_connections,
        "call_timeout_s": s.upstream_call_timeout_s,
        "concurrency": s.upstream_concurrency,
    }


def calling_youtube(profile: str) -> list[tuple[str, str]]:
    """``(slot, choice)`` overrides that keep ``profile`` calling YouTube on what is installed: when its
    video client is not installed (a slice removed), the first registered one whose calls spend quota
    (``Entry.spends_quota``: it calls YouTube) instead of the slot's first (the offline ``fake``)."""
    if "video_client" not in _stand_ins(profile):
        return []
    calling = [entry.name for entry in SLOTS["video_client"].registry if entry.spends_quota]
    return [("video_client", calling[0])] if calling else []


#: The calls to YouTube a big collection costs, whatever the client: 100 calls of 50 ids (5,000 ids)
#: for a client that batches, 100 ids for one calling once per id.
BIG_COLLECTION_CALLS: Final = 100


def big_collection(profile: str) -> int:
    """How many ids a big collection holds for ``profile`` run on what is installed calling YouTube
    (:func:`calling_youtube`): ``BIG_COLLECTION_CALLS`` calls' worth for its video client, so an
    ask costs the same number of calls whether the client batches or not (a skeleton's one-id-a-call
    stand-in would otherwise make 5,000 calls of one 5,000-id ask)."""
    client = dict(calling_youtube(profile)).get("video_client", choices_of(profile)["video_client"])
    return BIG_COLLECTION_CALLS * (MAX_IDS_PER_CALL if batches(client) else 1)


def budgeted(profile: str) -> bool:
    """Whether ``profile``, run on what is installed, counts a daily budget of YouTube units (its
    ``quota`` choice is not ``none``: a ledger's slice installed)."""
    return choices_of(profile).get("quota", NONE) != NONE
