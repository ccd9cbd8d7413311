"""Pieces of the perf lab that run no process: command names, report sections, argv."""

from __future__ import annotations

import sys
from pathlib import Path

from perf.procs import PYTHON, ROOT, portable
from perf.report import SOAK_HEADING
from perf.report_sections import replace_section
from perf.service import main_argv
from perf.wrk import wrk_argv


def test_commands_inside_the_repository_are_named_relative_to_it() -> None:
    assert portable(ROOT / ".venv" / "bin" / "python") == ".venv/bin/python"
    assert portable(ROOT / "tool") == "./tool"  # never a bare name: PATH would look it up
    assert portable("py-spy") == "py-spy"
    assert portable("/opt/elsewhere/bin/tool") == "/opt/elsewhere/bin/tool"
    assert portable(sys.executable) == PYTHON
    assert not PYTHON.startswith(f"{ROOT}/")


def test_the_service_command_line_turns_overrides_into_flags() -> None:
    argv = main_argv("fast", 8123, [("cache", "none"), ("video_client", "aiohttp")])

    assert argv == [PYTHON, "main.py", "--profile", "fast", "--cache", "none", "--video-client", "aiohttp",
                    "--port", "8123"]  # fmt: skip


def test_a_section_is_replaced_in_place_and_the_rest_kept() -> None:
    text = f"# Report\n\n{SOAK_HEADING}\n\nold numbers\n\n## Later section\n\nkept\n"

    new = replace_section(text, SOAK_HEADING, f"{SOAK_HEADING}\n\nnew numbers\n")

    assert new == f"# Report\n\n{SOAK_HEADING}\n\nnew numbers\n\n## Later section\n\nkept\n"


def test_a_missing_section_is_appended() -> None:
    new = replace_section("# Report\n\n## Results\n\nrows\n", SOAK_HEADING, f"{SOAK_HEADING}\n\nnumbers\n")

    assert new == f"# Report\n\n## Results\n\nrows\n\n{SOAK_HEADING}\n\nnumbers\n"


def test_wrk_gets_a_timeout_a_script_and_its_arguments() -> None:
    argv = wrk_argv(
        "http://127.0.0.1:1",
        threads=1,
        connections=64,
        duration_s=6,
        script=Path("perf/soak.lua"),
        timeout_s=5,
        script_args=["/a", "/b"],
    )

    assert argv == ["wrk", "-t1", "-c64", "-d6s", "--timeout", "5s", "--latency", "-s", "perf/soak.lua",
                    "http://127.0.0.1:1", "--", "/a", "/b"]  # fmt: skip


def test_a_run_writes_to_perf_out_unless_it_publishes() -> None:
    from pathlib import Path

    from perf.options import parse_args

    scratch, published = parse_args(["--short"]), parse_args(["--short", "--publish"])

    assert (scratch.report, scratch.flames, scratch.chart) == (
        Path("perf/out/RESULTS.md"),
        Path("perf/out/flames"),
        Path("perf/out/chart.png"),
    )
    assert (published.report, published.flames, published.chart) == (
        Path("perf/RESULTS.md"),
        Path("perf/flames"),
        Path("perf/chart.png"),
    )
