"""The perf lab's rounds: one row per profile, from its median round."""

from __future__ import annotations

from pathlib import Path

from perf.model import Flame, Measurement
from perf.rounds import median_round
from perf.wrk import SocketErrors, WrkResult


def measured(name: str, rps: float, flame: str | None = None, problem: str | None = None) -> Measurement:
    wrk = WrkResult(
        requests=int(rps * 10), duration_s=10.0, requests_per_s=rps, avg_ms=1.0, stdev_ms=0.1,
        max_ms=5.0, p50_ms=1.0, p75_ms=1.2, p90_ms=1.5, p99_ms=2.0 + rps / 1e6,
        socket_errors=SocketErrors(0, 0, 0, 0), non_2xx=0,
    )  # fmt: skip
    return Measurement(
        name,
        "granian / ...",
        wrk=None if problem else wrk,
        flame=Flame(Path(flame), None) if flame else None,
        problem=problem,
    )


def test_one_round_is_the_row_itself() -> None:
    only = measured("fast", 100.0, flame="f.svg")

    assert median_round([only]) is only


def test_the_row_is_the_median_round_whole_with_the_last_rounds_flame_graph() -> None:
    rounds = [measured("fast", 300.0), measured("fast", 100.0), measured("fast", 200.0, flame="last.svg")]

    row = median_round(rounds)

    assert row.wrk == rounds[2].wrk  # req/s 200 and that round's own latencies, not a blend
    assert row.flame is not None and row.flame.path == Path("last.svg")
    assert row.notes == ("req/s by round 300 / 100 / 200 (the row is the median round)",)


def test_with_an_even_number_of_rounds_the_lower_median_is_a_real_round() -> None:
    rounds = [measured("fast", 400.0), measured("fast", 100.0)]

    assert median_round(rounds).wrk == rounds[1].wrk


def test_a_failed_round_fails_the_row() -> None:
    rounds = [measured("fast", 300.0), measured("fast", 0.0, problem="wrk: connection refused")]

    row = median_round(rounds)

    assert row.problem == "wrk: connection refused"
