"""Lab profile specs: a profile, or a variant of one (``fast+cache=none+video_client=aiohttp``).

Each ``+slot=choice`` overrides one choice of the base profile (``main.py`` gets
it as ``--slot choice``), so a row can isolate a single swap; ``+workers=2``
sets a flagged setting the same way. What the profiles
and choices are comes from :mod:`perf.profiles`.
"""

from __future__ import annotations

from collections.abc import Sequence

from perf.profiles import choices_of, lab_settings, profile_names, slot_names, valid_choice


def split_spec(spec: str) -> tuple[str, list[tuple[str, str]]]:
    """The base profile and the ``(slot, choice)`` overrides, in order; ValueError for a part without ``=``."""
    base, *overrides = spec.split("+")
    pairs: list[tuple[str, str]] = []
    for override in overrides:
        slot, sep, choice = override.partition("=")
        if not sep:
            raise ValueError(f"{override!r} is not slot=choice")
        pairs.append((slot, choice))
    return base, pairs


def split_profiles(text: str) -> list[str]:
    """The specs of a comma-separated ``--profiles``, where a list choice keeps its commas.

    A part starts a new spec when it names a profile (``fast``, ``distributed+workers=2``) or
    follows a bare profile; any other part continues the choice before it:
    ``fast+cache=near,redis,demo`` is ``fast+cache=near,redis`` and ``demo``.
    """
    names = set(profile_names())
    specs: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if specs and "=" in specs[-1] and part.split("+", 1)[0] not in names:
            specs[-1] += "," + part
        else:
            specs.append(part)
    return specs


def lab_choices(spec: str) -> dict[str, str]:
    """Slot -> choice of a spec: its base profile's with the overrides applied.

    KeyError for an unknown base profile, ValueError for a malformed override or an
    unknown slot (the choices themselves are not checked: see :func:`unknown_profiles`).
    """
    base, overrides = split_spec(spec)
    choices = choices_of(base)
    for slot, choice in overrides:
        if slot in lab_settings():
            continue  # a setting, not a choice: main.py checks its value
        if slot not in choices:
            raise ValueError(f"no slot {slot!r}")
        choices[slot] = choice
    return choices


def unknown_profiles(specs: Sequence[str]) -> list[str]:
    """The specs that name an unknown profile, slot or choice."""
    unknown = []
    for spec in specs:
        try:
            choices = lab_choices(spec)
        except (KeyError, ValueError):
            unknown.append(spec)
            continue
        if not all(valid_choice(slot, choice) for slot, choice in choices.items()):
            unknown.append(spec)
    return unknown


def describe_choices(spec: str) -> str:
    """``server / video client / store / ...`` of a spec: its choices in :func:`choice_slots` order."""
    return " / ".join(lab_choices(spec).values())


def choice_slots() -> str:
    """The slots :func:`describe_choices` lists, in its order."""
    return " / ".join(slot.replace("_", " ") for slot in slot_names())
