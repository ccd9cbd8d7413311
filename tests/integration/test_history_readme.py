"""The README's history lines (the slice's part of the page), run as written after the walk-through's
PUT, against the service `make run` starts: each answers a success."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import httpx

from tests.integration.test_readme_walkthrough import ADDRESS
from tests.readme_commands import README, ROOT, commands_in, shell_blocks
from tests.support import running_service

ID = "99757a95-f758-499f-a170-bea93b2d8bcf"  # the walk-through's collection


def history_lines() -> list[tuple[str, ...]]:
    return [
        command.argv
        for block in shell_blocks(README.read_text())
        for command in commands_in(block)
        if command.program == "curl" and "/history" in " ".join(command.argv)
    ]


def test_the_readmes_history_lines_answer(tmp_path: Path) -> None:
    curl = shutil.which("curl")
    assert curl is not None, "curl is not installed (apt-get install curl)"
    lines = history_lines()
    assert lines, "README.md's history part has lost its curl lines"

    with running_service([], tmp_path / "service.log") as service:
        httpx.put(f"{service.url}/collections/{ID}", json={"videos": ["-4lB5EKS5Uk"]}).raise_for_status()
        for argv in lines:
            moved = [ADDRESS.sub(service.url.removeprefix("http://"), word) for word in argv[1:]]
            done = subprocess.run(
                [curl, "--silent", "--show-error", "--max-time", "10", "--write-out", "%{http_code}", *moved],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            assert done.returncode == 0 and done.stdout.endswith("200"), (argv, done.stdout, done.stderr)
