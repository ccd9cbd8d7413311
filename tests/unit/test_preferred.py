"""An entry declared ``preferred`` is its slot's default while registered; the slot's own
``default`` stands in without it (a slice's entry over the core's: ``prometheus`` over ``none``)."""

from __future__ import annotations

import pytest

from influencer_stats.bootstrap.registry import NONE, Registry, Slot
from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.config import resolve as resolve_module
from influencer_stats.config.resolve import resolve, resolve_sources

DOUBLE = {"YOUTUBE_API_URL": "http://127.0.0.1:9/youtube/v3/videos"}


def _slot(*entries: tuple[str, bool]) -> Slot:
    registry: Registry[object] = Registry("scratch")
    for name, preferred in entries:
        registry.register(name, object(), f"{name} entry", preferred=preferred)
    return Slot("metrics", "a scratch metrics slot", registry, default="plain")


def test_the_first_preferred_entry_registered_is_the_default_else_the_slots_own() -> None:
    assert _slot(("plain", False)).default_choice() == "plain"
    assert _slot(("plain", False), ("loud", True)).default_choice() == "loud"
    assert _slot(("loud", True), ("louder", True), ("plain", False)).default_choice() == "loud"


def test_nothing_given_resolves_to_the_preferred_entry_and_to_the_default_without_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with_it = _slot(("plain", False), ("loud", True))
    monkeypatch.setattr(resolve_module, "SLOTS", {**SLOTS, "metrics": with_it})
    resolved = resolve_sources(DOUBLE)
    assert resolved.settings.choices.one("metrics") == "loud" and resolved.sources["metrics"] == "default"
    assert resolve(DOUBLE, {"metrics": "plain"}).choices.one("metrics") == "plain"  # a flag still wins

    monkeypatch.setattr(resolve_module, "SLOTS", {**SLOTS, "metrics": _slot(("plain", False))})
    assert resolve(DOUBLE).choices.one("metrics") == "plain"


@pytest.mark.parametrize("slot", list(SLOTS.values()), ids=list(SLOTS))
def test_every_slots_default_is_one_it_accepts(slot: Slot) -> None:
    default = slot.default_choice()
    if default is not None:  # else the profile or another slot's choice decides
        assert slot.parse(default) == (() if slot.many and default == NONE else (default,))


def test_the_metrics_default_is_the_installed_preferred_entry_or_the_cores_none() -> None:
    slot = SLOTS["metrics"]
    preferred = [entry.name for entry in slot.registry if entry.preferred]
    chosen = resolve(DOUBLE).choices.one("metrics")

    assert chosen == (preferred[0] if preferred else NONE)
    assert slot.default == NONE and NONE in slot.registry
