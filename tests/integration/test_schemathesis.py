"""schemathesis against every server: the OpenAPI document and the behaviour agree.

``--checks all`` with a fixed seed: no 500, no status, header, content type
or body the document does not allow, 405 with Allow for undocumented methods,
a deleted collection stays deleted, a created one is readable. The edge (its routes,
bodies and problems) is one ``HttpApi`` for every server, so the first server registered (the
core's) is searched deeply and each further server, whose own code is only its framing, by a
third as many examples (12 s against 36 s a server, measured).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.support import SERVERS, running_service

DEEP, WIDE = 100, 30  # examples an operation: the core's server, each further server


@pytest.mark.parametrize("server", SERVERS)
def test_schemathesis_finds_nothing(server: str, tmp_path: Path) -> None:
    examples = DEEP if server == SERVERS[0] else WIDE
    with running_service(["--server", server], tmp_path / "service.log") as service:
        paths = httpx.get(f"{service.url}/openapi.json", timeout=10).json()["paths"]
        operations = sum(1 for item in paths.values() for key in item if key != "parameters")
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "schemathesis.cli",
                "run",
                f"{service.url}/openapi.json",
                "--checks",
                "all",
                "--seed",
                "42",
                "--max-examples",
                str(examples),
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )

    summary = re.search(r"(\d+) generated, (\d+) passed", result.stdout)
    assert result.returncode == 0, result.stdout[-5000:]
    assert summary is not None, result.stdout[-2000:]
    # At least half an example an operation, of those installed: 13 operations, 797 cases at 30
    # and 1,773 at 100; the skeleton's 9 (its slices' routes removed), 897 at 100.
    assert int(summary.group(1)) == int(summary.group(2)) >= operations * examples // 2
