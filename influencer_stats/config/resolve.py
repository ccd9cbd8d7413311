"""From flags and environment to validated ``Settings``; each value knows where it came from.

Precedence, per setting and per slot: a command-line flag, then the
environment, then the profile, then the declared default. The
environment is a parameter, so tests pass a dict. A bad value raises
``ConfigError`` naming the variable; ``main.py`` exits 2 with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.config.profiles import PROFILES, Profile
from influencer_stats.setting_kinds import Choices
from influencer_stats.settings import Settings, declared, default_of

Source = Literal["default", "profile", "environment", "flag"]


class ConfigError(Exception):
    """The user asked for something that does not exist or is not valid; exit code 2."""


@dataclass(frozen=True, slots=True)
class Resolved:
    """The settings, and where each setting and slot got its value."""

    settings: Settings
    sources: Mapping[str, Source]


def _given(
    name: str, env: str, flags: Mapping[str, str | None], environ: Mapping[str, str]
) -> tuple[str, Source] | None:
    if flags.get(name):
        return str(flags[name]), "flag"
    if environ.get(env):
        return environ[env], "environment"
    return None


def not_installed(profile: Profile) -> tuple[str, ...]:
    """The choices ``profile`` names that its slot does not offer here (``server 'granian'``):
    a slice that registered them is not installed. Empty for a profile that can run."""
    missing = []
    for slot, raw in profile.choices.items():
        try:
            SLOTS[slot].parse(raw)
        except ValueError:
            missing.append(f"{slot.replace('_', ' ')} {raw!r}")
    return tuple(missing)


def offered() -> dict[str, Profile]:
    """The profiles ``--list-profiles`` shows and the perf lab measures, in declaration order:
    those whose every choice is registered. One naming a removed slice's entry is not offered;
    ``--profile`` takes it only with each such slot given by a flag or the environment."""
    return {name: profile for name, profile in PROFILES.items() if not not_installed(profile)}


def profile_of(flags: Mapping[str, str | None], environ: Mapping[str, str]) -> tuple[Profile, Source]:
    """The profile asked for, or the default one."""
    given = _given("profile", declared()["profile"].env, flags, environ)
    name, source = given if given is not None else (str(default_of("profile")), "default")
    profile = PROFILES.get(name)
    if profile is None:
        raise ConfigError(f"unknown profile {name[:40]!r}; valid: {', '.join(offered())}")
    return profile, source  # one not offered runs only if its missing choices are overridden


def resolve_choices(
    profile: Profile, flags: Mapping[str, str | None], environ: Mapping[str, str]
) -> tuple[Choices, dict[str, Source]]:
    """One entry per slot: a flag, the environment, the profile, what the chosen base
    normally runs with (wrapper slots), the same name as another slot's choice (``same_as``),
    or the slot's default."""
    chosen: dict[str, tuple[str, ...]] = {}
    sources: dict[str, Source] = {}
    for slot in SLOTS.values():
        given = _given(slot.name, slot.env, flags, environ)
        if given is None and slot.name in profile.choices:
            given = profile.choices[slot.name], "profile"
        if given is None and slot.follows is not None:
            base = slot_registry_entry(slot.follows, chosen)
            given = ",".join(base) or "none", "default"
        if given is None and slot.same_as is not None and (like := chosen[slot.same_as][0]) in slot.registry:
            given = like, "default"
        if given is None and (default := slot.default_choice()) is not None:
            given = default, "default"
        if given is None:
            raise ConfigError(f"profile {profile.name!r} names no {slot.name.replace('_', ' ')}")
        raw, sources[slot.name] = given
        try:
            chosen[slot.name] = slot.parse(raw)
        except ValueError as error:
            if sources[slot.name] == "profile":
                raise ConfigError(_not_installed(profile, slot.name, slot.flag)) from None
            raise ConfigError(str(error)) from None
    return Choices(chosen), sources


def _not_installed(profile: Profile, slot: str, flag: str) -> str:
    return (
        f"profile {profile.name!r} needs {', '.join(not_installed(profile))}, not installed "
        f"(its slice removed: influencer_stats/bootstrap/slices); choose another {slot.replace('_', ' ')} "
        f"with {flag}, or a profile offered: {', '.join(offered())}"
    )


def slot_registry_entry(slot: str, chosen: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The wrappers the entry chosen for base ``slot`` normally runs with."""
    (name,) = chosen[slot]
    return SLOTS[slot].registry[name].wrappers


def resolve_sources(environ: Mapping[str, str], flags: Mapping[str, str | None] | None = None) -> Resolved:
    """Settings from ``flags`` (setting or slot name → value), ``environ`` and the profile."""
    flags = flags or {}
    profile, profile_source = profile_of(flags, environ)
    choices, sources = resolve_choices(profile, flags, environ)
    values: dict[str, object] = {}
    all_sources: dict[str, Source] = {"profile": profile_source, **sources}
    for name, spec in declared().items():
        if name == "profile":
            continue
        given = _given(name, spec.env, flags if spec.flag else {}, environ)
        if given is None and name in profile.settings:
            given = profile.settings[name], "profile"
        if given is None:
            all_sources[name] = "default"
            continue
        raw, all_sources[name] = given
        try:
            values[name] = spec.parse(raw)
        except ValueError as error:
            message = (
                str(error)
                if given[1] != "flag" or spec.flag is None
                else str(error).replace(spec.env, spec.flag)
            )
            shown = "" if spec.secret else f", got {raw[:40]!r}"
            raise ConfigError(f"{message}{shown}") from None
    settings = Settings(choices=choices, profile=profile.name, **values)  # type: ignore[arg-type]
    if (conflict := settings.conflict()) is not None:
        raise ConfigError(conflict)
    for slot in SLOTS.values():
        for name in choices[slot.name]:
            problem = slot.problem(name, settings)
            if problem is not None:
                raise ConfigError(f"{slot.name.replace('_', ' ')} {name!r} {problem}")
    return Resolved(settings, all_sources)


def resolve(environ: Mapping[str, str], flags: Mapping[str, str | None] | None = None) -> Settings:
    """``resolve_sources`` without the sources."""
    return resolve_sources(environ, flags).settings
