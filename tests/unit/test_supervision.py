"""The core's record of several worker processes (``bootstrap.supervision``): without a supervisor
the core serves one process, and ``supervise`` refuses more in one line, exit 2, starting nothing."""

from __future__ import annotations

import pytest

from influencer_stats.bootstrap.supervision import Supervision
from influencer_stats.serving import supervised
from influencer_stats.serving.supervised import Worker
from influencer_stats.setting_kinds import Choices
from influencer_stats.settings import Settings


def test_one_process_needs_no_supervisor_and_several_name_what_is_missing() -> None:
    none = Supervision()

    assert none.missing(1) is None
    assert Supervision(supervisor="some.module").missing(4) is None
    said = none.missing(3)
    assert said is not None
    assert said.startswith("--workers 3: this build serves one process; ")
    assert "the workers slice, which is not installed" in said and "--workers 1" in said


def test_supervise_without_a_supervisor_is_one_line_exit_2_and_starts_no_worker(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(supervised, "SUPERVISION", Supervision())
    started: list[Worker] = []

    with pytest.raises(SystemExit) as exited:
        supervised.supervise(Settings(choices=Choices({}), workers=2), started.append)

    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("influencer-stats: error: --workers 2: this build serves one process; ")
    assert err.count("\n") == 1
    assert started == []
