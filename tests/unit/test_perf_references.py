"""The perf lab's references: which one a profile is measured beside, the order of a round, the
ratios (medians of per-round ratios), and the references' settings against the service's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from perf.ceiling import BODY
from perf.machine import Machine
from perf.model import CEILING, LabRun, Measurement, Settings
from perf.references import MINIMAL, MINIMAL_LEAVES_OUT, RSGI_CEILING, reference_for, round_plan
from perf.report import render, results_table
from perf.rounds import Measured, compare, median_ratio, ratio, reference_row, rows
from perf.specs import lab_choices
from perf.summary import write_results_json
from perf.wrk import SocketErrors, WrkResult


def measured(
    name: str, rps: float, p50: float = 1.0, p99: float = 2.0, problem: str | None = None
) -> Measurement:
    wrk = WrkResult(
        requests=int(rps * 10), duration_s=10.0, requests_per_s=rps, avg_ms=p50, stdev_ms=0.1,
        max_ms=p99 * 2, p50_ms=p50, p75_ms=p50, p90_ms=p99, p99_ms=p99,
        socket_errors=SocketErrors(0, 0, 0, 0), non_2xx=0,
    )  # fmt: skip
    return Measurement(name, "runs", wrk=None if problem else wrk, problem=problem)


# --- Pairing and the order of a round ---------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "reference"),
    [
        ("v4", CEILING),  # starlette on uvicorn
        ("distributed", CEILING),  # asgi on uvicorn
        ("fast+server=aiohttp", CEILING),  # no aiohttp.web ceiling: uvicorn's stands in
        ("fast+server=starlette+cache=none", CEILING),
    ],
)
def test_a_profile_is_paired_with_the_reference_of_its_server_and_cache(spec: str, reference: str) -> None:
    assert reference_for(lab_choices(spec)) == reference


def test_each_profile_comes_right_after_its_reference_and_the_uvicorn_ceiling_is_always_measured() -> None:
    pairs = [("fast", RSGI_CEILING), ("fast+cache=none", MINIMAL), ("v5", RSGI_CEILING)]

    assert round_plan(pairs) == [
        (CEILING, None),  # paired with nothing: it opens the round (the 'ceiling %' column needs it)
        (RSGI_CEILING, None), ("fast", RSGI_CEILING),
        (MINIMAL, None), ("fast+cache=none", MINIMAL),
        (RSGI_CEILING, None), ("v5", RSGI_CEILING),  # shared: measured again, right before
    ]  # fmt: skip
    assert round_plan([("v4", CEILING), ("fast", RSGI_CEILING)]) == [
        (CEILING, None), ("v4", CEILING), (RSGI_CEILING, None), ("fast", RSGI_CEILING),
    ]  # fmt: skip


# --- Ratios ------------------------------------------------------------------------------


def test_a_ratio_is_unknown_without_both_numbers() -> None:
    assert ratio(3.0, 2.0) == 1.5
    assert ratio(None, 2.0) is None
    assert ratio(3.0, 0.0) is None
    assert ratio(float("nan"), 2.0) is None


def test_the_median_ratio_skips_unknown_rounds_and_averages_the_middle_two_of_an_even_count() -> None:
    assert median_ratio([0.5, None, 0.9, 0.7]) == 0.7
    assert median_ratio([0.5, 0.9, 0.7, 0.8]) == pytest.approx(0.75)
    assert median_ratio([None, None]) is None


def test_per_round_ratios_cancel_the_machine_drifting_by_two() -> None:
    # The machine halves its speed from round to round: reference and profile drift together.
    references = [measured(RSGI_CEILING, 40_000, p99=1.0), measured(RSGI_CEILING, 20_000, p99=2.0),
                  measured(RSGI_CEILING, 10_000, p99=4.0)]  # fmt: skip
    profiles = [measured("fast", 36_000, p99=1.2), measured("fast", 18_000, p99=2.4),
                measured("fast", 8_000, p99=6.0)]  # fmt: skip

    c = compare(profiles, references, RSGI_CEILING)

    assert c.rps_by_round == pytest.approx((0.9, 0.9, 0.8))
    assert c.p99_by_round == pytest.approx((1.2, 1.2, 1.5))
    assert c.reference == RSGI_CEILING
    assert (c.rps, c.p99, c.p50) == pytest.approx((0.9, 1.2, 1.0))


def test_a_failed_round_has_no_ratio_and_the_median_is_over_the_others() -> None:
    references = [measured(MINIMAL, 1000), measured(MINIMAL, 0, problem="exited"), measured(MINIMAL, 1000)]
    profiles = [
        measured("fast+cache=none", 500),
        measured("fast+cache=none", 400),
        measured("fast+cache=none", 700),
    ]

    c = compare(profiles, references, MINIMAL)

    assert c.rps_by_round == (0.5, None, 0.7)
    assert c.rps == pytest.approx(0.6)


def _lab_rounds() -> tuple[Measured, list[tuple[str, str]]]:
    pairs = [("fast", RSGI_CEILING), ("fast+cache=none", MINIMAL)]
    speeds = [1.0, 0.5, 0.8]  # the machine's speed in each round
    measured_rounds: Measured = [
        [
            (CEILING, None, measured(CEILING, 30_000 * s)),
            (RSGI_CEILING, None, measured(RSGI_CEILING, 40_000 * s, p99=1.0 / s)),
            ("fast", RSGI_CEILING, measured("fast", 30_000 * s, p99=1.5 / s)),
            (MINIMAL, None, measured(MINIMAL, 5_000 * s, p50=3.0 / s, p99=6.0 / s)),
            ("fast+cache=none", MINIMAL, measured("fast+cache=none", 4_000 * s, p50=3.6 / s, p99=9.0 / s)),
        ]
        for s in speeds
    ]
    return measured_rounds, pairs


def test_rows_pair_each_profile_round_with_the_reference_measured_right_before_it() -> None:
    measured_rounds, pairs = _lab_rounds()

    ceiling, references, profiles = rows(measured_rounds, pairs)

    assert ceiling.name == CEILING and ceiling.rps == 24_000  # the median measurement
    assert [m.name for m in references] == [RSGI_CEILING, MINIMAL]
    fast, uncached = profiles
    assert fast.comparison is not None and uncached.comparison is not None
    assert (fast.comparison.reference, uncached.comparison.reference) == (RSGI_CEILING, MINIMAL)
    assert (fast.comparison.rps, fast.comparison.p99) == pytest.approx((0.75, 1.5))
    assert (uncached.comparison.rps, uncached.comparison.p50) == pytest.approx((0.8, 1.2))
    assert fast.rps == 24_000  # the row itself is still the median round
    assert any(
        note.startswith("× rsgi-ceiling by round") and "0.75× / 0.75× / 0.75×" in note for note in fast.notes
    )


def test_a_reference_measured_beside_several_profiles_lists_each_measurement_by_round() -> None:
    row = reference_row([[measured(CEILING, 100), measured(CEILING, 300)], [measured(CEILING, 200)]])

    assert row.rps == 200
    assert row.notes == (
        "req/s by round 100 + 300 / 200 (measured right before each profile it is the reference of, "
        "`+` between one round's; the row is the median measurement)",
    )


# --- Report and results.json --------------------------------------------------------------


def _run() -> LabRun:
    measured_rounds, pairs = _lab_rounds()
    ceiling, references, profiles = rows(measured_rounds, pairs)
    return LabRun(
        command="python perf/run.py", started_at="now", elapsed_s=1.0,
        machine=Machine(2, "cpu", "kernel", "python", {}, {}),
        settings=Settings(1, 16, 5, 1, 5, "separate", "original", False, rounds=3),
        workload="3 videos", choice_slots="server / cache", double="nginx", double_kind="nginx",
        ceiling=ceiling, profiles=profiles, load_before="0", load_after="0",
        references=references, pairs=pairs,
    )  # fmt: skip


def _cells(table: str, name: str) -> list[str]:
    (line,) = [row for row in table.splitlines() if row.startswith(f"| {name} |")]
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_the_table_shows_each_profiles_reference_and_its_median_ratios() -> None:
    table = results_table(_run())
    header = _cells(table, "profile")

    assert header[-4:] == ["reference", "× ref req/s", "× ref p50", "× ref p99"]
    assert _cells(table, "fast")[-4:] == [RSGI_CEILING, "0.75×", "1.00×", "1.50×"]
    assert _cells(table, "fast+cache=none")[-4:] == [MINIMAL, "0.80×", "1.20×", "1.50×"]
    for reference in (RSGI_CEILING, MINIMAL, CEILING):
        assert len(_cells(table, reference)) == len(header)
        assert _cells(table, reference)[-4:] == ["—"] * 4


def test_the_report_explains_the_references_and_what_minimal_leaves_out(tmp_path: Path) -> None:
    text = render(_run(), tmp_path / "RESULTS.md", None, None)
    section = text.split("## References", 1)[1].split("\n## ", 1)[0]

    assert (
        "`rsgi-ceiling`" in section
        and "`minimal`" in section
        and "medians of the per-round ratios" in section
    )
    assert "Paired here with `fast+cache=none`" in section
    assert all(f"- {item}" in section for item in MINIMAL_LEAVES_OUT)
    assert "**fast**: × rsgi-ceiling by round" in text


def test_a_rerun_keeps_the_sections_people_wrote_and_replaces_the_generated_ones(tmp_path: Path) -> None:
    previous = render(_run(), tmp_path / "RESULTS.md", None, None).replace(
        "## Results", "## Results\n\nstale"
    )
    previous += "\n## Quota economy\n\nwritten by hand\n\n## Workers\n\nalso by hand\n"

    text = render(_run(), tmp_path / "RESULTS.md", None, previous)

    assert "stale" not in text
    assert text.count("## Results") == 1 and text.count("## Reading the flame graphs") == 1
    assert text.rstrip().endswith("## Quota economy\n\nwritten by hand\n\n## Workers\n\nalso by hand")


def test_results_json_carries_each_profiles_reference_and_ratios(tmp_path: Path) -> None:
    write_results_json(_run(), tmp_path / "results.json")
    saved: dict[str, Any] = json.loads((tmp_path / "results.json").read_text())

    fast = saved["profiles"][0]["comparison"]
    assert fast["reference"] == RSGI_CEILING
    assert fast["rps"] == pytest.approx(0.75)
    assert fast["rps_by_round"] == pytest.approx([0.75, 0.75, 0.75])
    assert [m["name"] for m in saved["references"]] == [RSGI_CEILING, MINIMAL]
    assert saved["pairs"] == [["fast", RSGI_CEILING], ["fast+cache=none", MINIMAL]]


# --- The references run with the service's settings -------------------------------------


def test_minimal_uses_the_aiohttp_batched_clients_settings_and_the_ceilings_body() -> None:
    from influencer_stats.interpreters.youtube.youtube_api import MAX_IDS_PER_CALL
    from perf import minimal
    from perf.profiles import client_settings

    assert client_settings() == {
        "pool": minimal.POOL,
        "call_timeout_s": minimal.CALL_TIMEOUT_S,
        "concurrency": minimal.CONCURRENCY,
    }
    assert minimal.IDS_PER_CALL == MAX_IDS_PER_CALL


class _Proto:
    """Just enough of Granian's RSGI HTTP protocol: what the app answered."""

    def __init__(self) -> None:
        self.answers: list[tuple[int, list[tuple[str, str]], bytes]] = []

    def response_bytes(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.answers.append((status, headers, body))


async def test_the_rsgi_ceiling_answers_the_uvicorn_ceilings_body_to_any_get() -> None:
    from types import SimpleNamespace

    from perf.rsgi_ceiling import app

    proto = _Proto()
    for method in ("GET", "POST"):
        await app(cast(Any, SimpleNamespace(proto="http", method=method, path="/x")), cast(Any, proto))

    assert proto.answers == [
        (200, [("content-type", "application/json")], BODY),
        (405, [("allow", "GET")], b""),
    ]


async def test_the_busy_ceiling_answers_what_the_ceiling_answers() -> None:
    from types import SimpleNamespace

    from perf.rsgi_ceiling import app, busy_app

    plain, busy = _Proto(), _Proto()
    for method in ("GET", "POST"):
        scope = cast(Any, SimpleNamespace(proto="http", method=method, path="/x"))
        await app(scope, cast(Any, plain))
        await busy_app(scope, cast(Any, busy))

    assert busy.answers == plain.answers


def test_work_us_serves_the_busy_app_and_tells_its_workers_how_long_to_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import os

    import perf.rsgi_ceiling as ceiling

    served: list[str] = []
    monkeypatch.setattr(ceiling, "serve", lambda target, *_: served.append(target))
    monkeypatch.setenv("PERF_CEILING_WORK_US", "0")

    ceiling.main(["--work-us", "10"])
    assert os.environ["PERF_CEILING_WORK_US"] == "10.0"  # the worker processes read it when they import
    ceiling.main([])

    assert served == ["perf.rsgi_ceiling:busy_app", "perf.rsgi_ceiling:app"]
