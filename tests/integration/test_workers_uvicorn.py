"""``uvicorn influencer_stats.asgi:app --workers N`` and ``--reload``: uvicorn's own supervisors
(``serving/uvicorn_supervisors.py``, the ``workers`` slice's), over real uvicorn processes.

One child says where the service listens and the start-up warnings, once; a refused setting is one
line, and ends the supervisor (``--workers``: with the child's code) or the reloader (0). The one
process cases are the core's: test_asgi.py.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from influencer_stats.config.resolve import resolve
from influencer_stats.serving.address import announce
from tests.integration.test_asgi import REFUSAL, REFUSED, UVICORN, _uvicorn
from tests.support import free_port, stop, wait_for, wait_until_healthy


@pytest.mark.parametrize(
    ("flags", "workers"), [(["--workers", "2"], 2), (["--reload", "--reload-dir", "watched"], 1)]
)
def test_under_uvicorn_s_supervisors_one_process_says_where_it_listens(
    flags: list[str], workers: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "watched").mkdir()  # --reload watches an empty folder: nothing reloads mid-test
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "uvicorn.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*UVICORN, "influencer_stats.asgi:app", "--log-level", "warning", "--port", str(port), *flags],
            cwd=tmp_path,
            env={**os.environ, "INFLUENCER_STATS_CACHE_TLL": "5"},  # misspelled: warned about once
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_healthy(url, process)
        # The child that listens first says so: after an answer, at most a moment later (bounded).
        wait_for(lambda: "influencer-stats: listening on" in log.read_text(), 5)
    finally:
        stop(process)

    assert process.returncode == 0  # stopped by SIGTERM
    said = [line for line in log.read_text().splitlines() if not line.startswith("{")]
    announce(replace(resolve({}), port=port, workers=workers))
    warning = (
        "influencer-stats: warning: INFLUENCER_STATS_CACHE_TLL is not a setting, ignored; "
        "did you mean INFLUENCER_STATS_CACHE_TTL?"
    )
    # Each from whichever child got there first: the order of the two is theirs.
    assert sorted(said) == sorted([warning, *capsys.readouterr().err.splitlines()])


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--workers", "2"], 2),  # was: "Child process died", a new one, the same refusal, forever
        # uvicorn's reloader runs none of the service's code and ends 0 on the SIGTERM the child sends it;
        # the child's line says why (was: the reloader waited for a file to change, serving nothing).
        (["--reload", "--reload-dir", "."], 0),
    ],
    ids=["--workers 2", "--reload"],
)
def test_a_refused_setting_ends_uvicorn_s_supervisors_with_one_line(
    flags: list[str], expected: int, tmp_path: Path
) -> None:
    code, output = _uvicorn(
        ["influencer_stats.asgi:app", "--log-level", "warning", *flags], tmp_path, REFUSED
    )

    assert code == expected, output[-2000:]
    assert output == REFUSAL
