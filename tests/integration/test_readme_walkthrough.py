"""The README's curl walk-through, run as written against the service `make run` starts.

Each curl line of the README's walk-through runs with the real curl, in order,
against the default profile (what `make run` serves), the address moved to a free
port; every answer must be a success, and the stats answer the one the README
prints.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import orjson

from influencer_stats.settings import default_of
from tests.readme_commands import README, ROOT, commands_in, shell_blocks
from tests.support import running_service

ADDRESS = re.compile(r"(localhost|127\.0\.0\.1):8080")
#: As `make run` serves: the fake client's world grows (the tests' services keep it still), its
#: first minute's numbers being the starting ones the README prints.
AS_MAKE_RUN = {"INFLUENCER_STATS_FAKE_GROWTH": str(default_of("fake_growth"))}


def walk_through() -> list[tuple[str, ...]]:
    """The curl lines of the README's first block that has any."""
    for block in shell_blocks(README.read_text()):
        curls = [command.argv for command in commands_in(block) if command.program == "curl"]
        if curls:
            return curls
    return []


def the_printed_stats_answer() -> dict[str, object]:
    fenced = re.search(r"^```json\n(.*?)^```", README.read_text(), re.DOTALL | re.MULTILINE)
    assert fenced is not None, "README.md shows no stats answer"
    answer: dict[str, object] = orjson.loads(fenced.group(1))
    return answer


def test_the_readme_walk_through_answers_as_the_readme_says(tmp_path: Path) -> None:
    curl = shutil.which("curl")
    assert curl is not None, "curl is not installed: the README's walk-through uses it (apt-get install curl)"
    lines = walk_through()
    assert len(lines) >= 5, "README.md's walk-through has lost its curl lines"

    with running_service([], tmp_path / "service.log", env=AS_MAKE_RUN) as service:
        host_port = service.url.removeprefix("http://")
        answers = {}
        for argv in lines:
            body = tmp_path / "body"
            moved = [ADDRESS.sub(host_port, word) for word in argv[1:]]
            quiet = [curl, "--silent", "--show-error", "--max-time", "10", "--output", str(body)]
            done = subprocess.run(
                [*quiet, "--write-out", "%{http_code}", *moved],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            line = " ".join(argv)
            assert done.returncode == 0, f"{line}: {done.stderr}"
            assert done.stdout.startswith("2"), f"{line}: answered {done.stdout}: {body.read_text()[:300]}"
            answers[line] = body.read_bytes()

    stats = [body for line, body in answers.items() if line.split()[-1].endswith("/stats")]
    assert len(stats) == 1, "the walk-through no longer asks for a collection's stats"
    assert orjson.loads(stats[0]) == the_printed_stats_answer()
