"""What ``--workers`` > 1 is told to use instead of a choice kept per process: what its entry
names, else the slot's registered choices that keep nothing per process (whichever slices are
installed: the hint never names one removed), else one worker."""

from __future__ import annotations

import pytest

from influencer_stats.bootstrap.registry import Registry, Slot
from influencer_stats.bootstrap.slots import SLOTS
from influencer_stats.config.resolve import ConfigError, resolve

DOUBLE = {"YOUTUBE_API_URL": "http://127.0.0.1:9/youtube/v3/videos"}


def _slot(*entries: tuple[str, tuple[str, str] | None]) -> Slot:
    registry: Registry[object] = Registry("shelf")
    for name, per_process in entries:
        registry.register(name, object(), f"{name} entry", per_process=per_process)
    return Slot("shelf_store", "a scratch slot", registry)


def test_an_empty_instead_names_the_registered_choices_that_keep_nothing_per_process() -> None:
    slot = _slot(("box", ("boxes", "")), ("vault", None), ("shelf", ("books", "--shelf-store vault")))
    slot.registry.register("safe", object(), "safe entry")  # a slice's, registered later

    assert slot.instead("box") == "--shelf-store vault or safe"
    assert slot.instead("shelf") == "--shelf-store vault"  # what the entry names
    assert slot.instead("vault") is None  # keeps nothing per process


def test_with_no_choice_shared_between_processes_the_hint_is_one_worker() -> None:
    slot = _slot(("box", ("boxes", "")))

    assert slot.instead("box") == "--workers 1 (no shelf store installed is shared between processes)"


def test_the_cores_in_memory_stores_name_only_the_installed_stores_workers_share() -> None:
    slot = SLOTS["store"]
    shared = [entry.name for entry in slot.registry if entry.per_process is None]
    hint = slot.instead("dict") or ""

    assert hint.endswith(" or ".join(shared)) if shared else hint.startswith("--workers 1")
    with pytest.raises(ConfigError) as raised:
        resolve(DOUBLE, {"store": "dict", "workers": "2"})
    assert str(raised.value) == f"store 'dict' keeps collections in each process: with --workers 2 use {hint}"
