"""What the numbers were measured on."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Final

from perf.procs import portable

PACKAGES: Final = ("starlette", "uvicorn", "aiohttp", "httpx", "uvloop", "httptools")


@dataclass(frozen=True, slots=True)
class Machine:
    cores: int
    cpu_model: str
    kernel: str
    python: str
    packages: dict[str, str]
    tools: dict[str, str]


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def tool_version(argv: list[str]) -> str:
    """The first line a tool prints for its version flag (stdout or stderr)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unavailable ({error})"
    lines = (done.stdout + done.stderr).strip().splitlines()
    return lines[0].strip() if lines else "unknown"


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def describe(tools: dict[str, list[str]]) -> Machine:
    """Cores (as ``nproc`` counts them: the CPUs this process may run on), CPU, versions.

    The interpreter is named relative to the repository (no machine-specific folder).
    """
    return Machine(
        cores=len(os.sched_getaffinity(0)),
        cpu_model=cpu_model(),
        kernel=f"{platform.system()} {platform.release()}",
        python=f"{platform.python_implementation()} {platform.python_version()} ({portable(sys.executable)})",
        packages={name: package_version(name) for name in PACKAGES},
        tools={name: tool_version(argv) for name, argv in tools.items()},
    )
