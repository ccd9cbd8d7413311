"""The lab's profile specs (``fast+cache=none``) over the service's profiles."""

from __future__ import annotations

import pytest

from influencer_stats.bootstrap.videos import batches
from perf.profiles import big_collection, choices_of, profile_names, slot_names, valid_choice
from perf.specs import choice_slots, describe_choices, lab_choices, split_spec, unknown_profiles


def test_the_config_facing_interface_answers_in_plain_strings() -> None:
    assert {"v1", "fast", "demo"} <= set(profile_names())
    slots = slot_names()
    assert {"server", "video_client", "store", "logger", "cache"} <= set(slots)
    v3 = choices_of("v3")  # a core profile: every choice installed
    assert list(v3) == slots
    assert all(valid_choice(slot, choice) for slot, choice in v3.items())
    assert not valid_choice("cache", "no-such-cache")
    assert not valid_choice("no-such-slot", "none")
    with pytest.raises(KeyError):
        choices_of("no-such-profile")


def test_a_variant_overrides_one_choice_of_its_base_profile() -> None:
    assert split_spec("fast+cache=none") == ("fast", [("cache", "none")])
    assert lab_choices("fast+cache=none") == {**choices_of("fast"), "cache": "none"}
    assert describe_choices("fast+cache=none").split(" / ") == list(lab_choices("fast+cache=none").values())
    assert choice_slots().split(" / ") == [slot.replace("_", " ") for slot in slot_names()]


@pytest.mark.parametrize(
    "spec", ["no-such-profile", "fast+cache", "fast+no_such_slot=x", "fast+cache=no-such-cache"]
)
def test_unknown_profiles_slots_and_choices_are_refused(spec: str) -> None:
    assert unknown_profiles(["v3", spec, "v3+store=dict"]) == [spec]


def test_a_big_collection_costs_a_hundred_calls_whether_the_client_batches_or_not() -> None:
    # fast's own client batches 50 ids a call; on stand-ins (its slice removed) the one calling
    # YouTube per id would make 5,000 calls of a 5,000-id ask: the soak's big collection is smaller.
    assert big_collection("fast") == (5_000 if batches(choices_of("fast")["video_client"]) else 100)
