"""The lab's ``--reference P`` (any profile spec as every profile's reference) and ``--pin`` (the
servers on one CPU, the load on the other): the options, the pairing, the order of a round, the
rows and ratios, and where the report says it."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, cast

import pytest

from perf.model import CEILING, Measurement
from perf.options import parse_args
from perf.procs import LOAD_CPU, SERVER_CPU, pinned
from perf.references import reference_for, references_section, round_plan, unpairable
from perf.report import render
from perf.rounds import Measured, rows
from perf.run import measure_rounds
from perf.specs import lab_choices, split_profiles, unknown_profiles
from tests.unit.test_perf_references import _run, measured

#: A list choice keeps its comma; a core profile and core names only (``none``: no wrapper), so it
#: names no slice's choice.
LIST = "v3+store=dict+video_wrappers=breaker,none"

# --- Options -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["v3", "demo", "demo+server=starlette", LIST, "guarded", "auto"])
def test_reference_takes_any_profile_spec_besides_auto_and_guarded(spec: str) -> None:
    assert parse_args(["--reference", spec]).reference == spec


@pytest.mark.parametrize("spec", ["minimal", "nope", "fast+cache=nope", "fast+nope=1"])
def test_reference_refuses_what_is_neither(spec: str) -> None:
    with pytest.raises(SystemExit):
        parse_args(["--reference", spec])


def test_pin_is_off_unless_asked() -> None:
    assert parse_args([]).settings.pin is False
    assert parse_args(["--pin"]).settings.pin is True
    assert (SERVER_CPU, LOAD_CPU) == (0, 1)


def test_a_list_choice_keeps_its_commas_in_profiles() -> None:
    assert split_profiles(f"distributed, {LIST}+workers=2,demo,") == [
        "distributed",
        f"{LIST}+workers=2",
        "demo",
    ]
    assert split_profiles("v1,v2") == ["v1", "v2"]
    assert parse_args(["--profiles", f"{LIST},{LIST}+workers=2"]).profiles == [LIST, f"{LIST}+workers=2"]
    assert lab_choices(LIST)["video_wrappers"] == "breaker,none" and not unknown_profiles([LIST])
    assert split_profiles("v1,bogus") == ["v1", "bogus"]  # refused by its own name
    assert unknown_profiles(split_profiles("fast+cache=stats,bogus")) == ["fast+cache=stats,bogus"]


def test_pinned_runs_a_command_on_one_cpu_with_taskset() -> None:
    assert pinned(["python", "main.py"], None) == ["python", "main.py"]
    assert pinned(["python", "main.py"], 0) == ["taskset", "--cpu-list", "0", "python", "main.py"]


# --- Pairing and the order of a round ---------------------------------------------------------------


def test_a_profile_reference_pairs_every_profile_with_it_and_comes_right_before_each() -> None:
    profiles = ["distributed", "distributed+server=granian"]
    pairs = [(spec, reference_for(lab_choices(spec), "fast")) for spec in profiles]

    assert pairs == [("distributed", "fast"), ("distributed+server=granian", "fast")]
    assert round_plan(pairs) == [
        (CEILING, None),  # paired with nothing: it still opens the round
        ("fast", None), ("distributed", "fast"),
        ("fast", None), ("distributed+server=granian", "fast"),
    ]  # fmt: skip


def test_a_profile_cannot_be_its_own_reference() -> None:
    assert unpairable(lab_choices("fast"), "fast", "fast") == "a profile cannot be its own reference"
    assert unpairable(lab_choices("distributed"), "fast", "distributed") is None
    assert unpairable(lab_choices("distributed+workers=2"), "distributed", "distributed+workers=2") is None


class _Lab:
    """What :func:`perf.run.measure_rounds` asks of a lab: the calls, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, bool]] = []

    def measure_reference(self, name: str, double: object, *, flame: bool = False) -> Measurement:
        self.calls.append(("reference", name, flame))
        return measured(name, 1000)

    def measure_profile(self, name: str, double: object, *, flame: bool = True) -> Measurement:
        self.calls.append(("profile", name, flame))
        return measured(name, 500)


def test_a_profile_reference_is_measured_as_a_profile_with_one_flame_graph_in_the_last_round() -> None:
    lab = _Lab()
    plan = round_plan([("distributed", "fast"), ("distributed+server=granian", "fast")])

    measured_rounds = measure_rounds(
        cast(Any, lab), plan, cast(Any, None), 2, cast(Any, lambda message: None)
    )

    last = [
        ("reference", CEILING, False),
        ("profile", "fast", True),  # the reference's flame graph: once
        ("profile", "distributed", True),
        ("profile", "fast", False),
        ("profile", "distributed+server=granian", True),
    ]
    assert lab.calls[5:] == last
    assert [flame for _, _, flame in lab.calls[:5]] == [False] * 5
    assert [(name, reference) for name, reference, _ in measured_rounds[0]] == plan


# --- Rows, ratios and the report -------------------------------------------------------------------------


def _with_cpu(name: str, rps: float, p99: float, cpu_us: float) -> Measurement:
    m = measured(name, rps, p99=p99)
    return dataclasses.replace(m, cpu_s=cpu_us * rps * 10 / 1e6)  # measured() makes rps * 10 requests


def _paired_rounds() -> tuple[Measured, list[tuple[str, str]]]:
    pairs = [("distributed", "fast"), ("distributed+server=granian", "fast")]
    speeds = [1.0, 0.5, 0.8]
    return [
        [
            (CEILING, None, measured(CEILING, 40_000 * s)),
            ("fast", None, _with_cpu("fast", 30_000 * s, 1.0 / s, 30)),
            ("distributed", "fast", _with_cpu("distributed", 15_000 * s, 3.0 / s, 60)),
            ("fast", None, _with_cpu("fast", 32_000 * s, 1.0 / s, 30)),
            ("distributed+server=granian", "fast", _with_cpu("distributed+server=granian", 24_000 * s, 1.2 / s, 36)),
        ]
        for s in speeds
    ], pairs  # fmt: skip


def test_rows_ratio_each_profile_to_the_profile_reference_measured_right_before_it() -> None:
    measured_rounds, pairs = _paired_rounds()

    ceiling, references, profiles = rows(measured_rounds, pairs)

    assert ceiling.name == CEILING
    assert [r.name for r in references] == ["fast"]  # one row: its median measurement of six
    assert references[0].rps == 30_000 * 0.8
    distributed, granian = profiles
    assert distributed.comparison is not None and granian.comparison is not None
    assert distributed.comparison.reference == "fast"
    assert distributed.comparison.rps_by_round == pytest.approx((0.5, 0.5, 0.5))
    assert distributed.comparison.p99 == pytest.approx(3.0)
    assert distributed.comparison.cpu == pytest.approx(2.0)
    assert granian.comparison.rps_by_round == pytest.approx((0.75, 0.75, 0.75))  # 24,000 / the second fast
    assert granian.comparison.cpu == pytest.approx(1.2)


def test_workers_against_one_compare_server_cpu_per_request_round_by_round() -> None:
    pairs = [("distributed+workers=2", "distributed")]
    measured_rounds: Measured = [
        [
            (CEILING, None, measured(CEILING, 40_000)),
            ("distributed", None, _with_cpu("distributed", 8_000, 3.0, cpu)),
            ("distributed+workers=2", "distributed", _with_cpu("distributed+workers=2", 12_000, 2.5, cpu2)),
        ]
        for cpu, cpu2 in [(100, 105), (90, 108), (110, 110)]
    ]

    _, references, (two,) = rows(measured_rounds, pairs)

    assert [r.name for r in references] == ["distributed"]
    assert two.comparison is not None
    assert two.comparison.cpu_by_round == pytest.approx((1.05, 1.2, 1.0))
    assert two.comparison.cpu == pytest.approx(1.05)


def test_the_report_names_the_profile_reference_and_the_placement(tmp_path: Path) -> None:
    section = references_section(["fast", CEILING], [("distributed", "fast")])
    assert "`fast`: a profile as a reference (`--reference fast`)" in section
    assert "Paired here with `distributed`" in section

    run = _run()
    plain = render(run, tmp_path / "RESULTS.md", None, None)
    pinned_run = dataclasses.replace(run, settings=dataclasses.replace(run.settings, pin=True))
    method = render(pinned_run, tmp_path / "RESULTS.md", None, None).split("## How it was measured", 1)[1]
    method = method.split("\n## ", 1)[0]

    assert "Placement" not in plain
    assert f"on CPU {SERVER_CPU} alone (`taskset --cpu-list {SERVER_CPU}`)" in method
    assert f"the load on CPU {LOAD_CPU}: wrk" in method and "redis-server" in method
