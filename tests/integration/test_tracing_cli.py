"""``main.py --tracing otel`` where the otel extra is not installed: one line, exit 2."""

from __future__ import annotations

import os
from pathlib import Path

from influencer_stats.bootstrap.slices.tracing import INSTALL_OTEL
from tests.integration.test_cli import run_main

#: A sitecustomize that makes the interpreter behave as if no opentelemetry were installed.
HIDE_OPENTELEMETRY = """
import sys

class HideOpentelemetry:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "opentelemetry":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, HideOpentelemetry())
"""


def test_tracing_otel_without_the_extra_exits_2_with_one_line_naming_an_install_that_works(
    tmp_path: Path,
) -> None:
    (tmp_path / "sitecustomize.py").write_text(HIDE_OPENTELEMETRY)
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))

    result = run_main("--tracing", "otel", env={**os.environ, "PYTHONPATH": path})

    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.splitlines() == [
        f"main.py: error: tracing 'otel' needs the otel extra: {INSTALL_OTEL}"
    ]
