"""What a first run meets (issue 31) of the SQLite database: a start-up that cannot open it.

Each as a real process on every server, in one process and with two workers: one line naming
the setting and its exit code, never a traceback.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.test_first_run import WORKERS, _start
from tests.support import SERVERS


def _start_with_db(server: str, workers: str, db: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "main.py", "--server", server, "--store", "sqlite", "--workers", workers]
    return _start(argv, tmp_path, {"INFLUENCER_STATS_DB": str(db)})


@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("server", SERVERS)
def test_a_data_folder_that_cannot_be_created_is_one_line_naming_the_setting_and_exit_1(
    server: str, workers: str, tmp_path: Path
) -> None:
    # As root no mode makes a folder unwritable: a folder under a regular file cannot be made either.
    (tmp_path / "a-file").write_text("not a folder\n")
    db = tmp_path / "a-file" / "data" / "stats.sqlite3"

    result = _start_with_db(server, workers, db, tmp_path)

    assert result.returncode == 1, result.stderr[-3000:]
    assert result.stderr == (
        f"influencer-stats: error: INFLUENCER_STATS_DB={db}: "
        f"cannot create folder {db.parent}: Not a directory\n"
    )
    assert "Traceback" not in result.stdout


@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("server", SERVERS)
def test_a_database_file_that_is_not_sqlite_is_one_line_naming_the_setting_and_exit_1(
    server: str, workers: str, tmp_path: Path
) -> None:
    db = tmp_path / "notes.txt"
    db.write_text("these are my notes, not a database; " * 20)

    result = _start_with_db(server, workers, db, tmp_path)

    assert result.returncode == 1, result.stderr[-3000:]
    assert result.stderr == (
        f"influencer-stats: error: INFLUENCER_STATS_DB={db}: cannot open the database: file is not a database\n"
    )
    assert "Traceback" not in result.stdout
    assert db.read_text().startswith("these are my notes")  # left as it was


@pytest.mark.parametrize("workers", WORKERS)
def test_uvicorn_main_app_says_why_the_database_cannot_open_once_and_exits_1(
    workers: str, tmp_path: Path
) -> None:
    db = tmp_path / "notes.txt"
    db.write_text("these are my notes, not a database; " * 20)
    argv = [sys.executable, "-m", "uvicorn", "main:app", "--workers", workers]

    result = _start(argv, tmp_path, {"INFLUENCER_STATS_DB": str(db), "INFLUENCER_STATS_STORE": "sqlite"})

    assert result.returncode == 1, result.stderr[-3000:]
    line = f"main:app: error: INFLUENCER_STATS_DB={db}: cannot open the database: file is not a database\n"
    assert result.stderr.count(line) == 1, result.stderr[
        -3000:
    ]  # uvicorn's supervisor says its own INFO lines
    assert "Traceback" not in result.stderr + result.stdout
