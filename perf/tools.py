"""The tools the lab needs besides Python packages of the service: where they are, how to install them."""

from __future__ import annotations

import os
import shutil
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import Final

from perf.wrk import WRK

INSTALL_HINTS: Final = {
    "wrk": "apt-get install wrk (Debian/Ubuntu), or run scripts/perf-up.sh as root",
    "py-spy": "pip install py-spy (a dev dependency: pip install -e '.[dev]')",
    "matplotlib": "pip install matplotlib (a dev dependency: pip install -e '.[dev]')",
}


def find_py_spy() -> str | None:
    """py-spy next to this Python (a venv's bin/, even when not activated), else on PATH."""
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if os.access(beside, os.X_OK) else shutil.which("py-spy")


def missing_tools() -> list[str]:
    """Install hints for every tool the lab needs and cannot find."""
    missing = []
    if shutil.which(WRK) is None:
        missing.append(f"wrk: not on PATH; install: {INSTALL_HINTS['wrk']}")
    if find_py_spy() is None:
        missing.append(
            f"py-spy: not next to {sys.executable} nor on PATH; install: {INSTALL_HINTS['py-spy']}"
        )
    if find_spec("matplotlib") is None:
        missing.append(f"matplotlib: not importable; install: {INSTALL_HINTS['matplotlib']}")
    return missing
