"""The shell commands a Markdown page shows, as a reader would type them.

A command is a line of a fenced ``sh``/``shell``/``bash``/``console`` block,
with backslash continuations joined and ``#`` comments dropped, split the way
the shell splits it (``shlex``): leading ``NAME=value`` words are its
environment, the rest its argv. A line the shell could not split raises.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SHELLS = frozenset({"sh", "shell", "bash", "console"})

_FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class Command:
    """One command line: what was written, its leading variables, and its words."""

    line: str
    env: dict[str, str] = field(hash=False)
    argv: tuple[str, ...]

    @property
    def program(self) -> str:
        return self.argv[0]


def shell_blocks(markdown: str) -> list[str]:
    """The bodies of the page's fenced shell blocks, in order."""
    return [match.group(2) for match in _FENCE.finditer(markdown) if match.group(1) in SHELLS]


def commands_in(block: str) -> list[Command]:
    """Every command of a shell block; a line that does not split raises ``ValueError``."""
    found = []
    for line in block.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if words and words[-1] == "&":
            words = words[:-1]
        env: dict[str, str] = {}
        while words and _ASSIGNMENT.match(words[0]):
            name, _, value = words.pop(0).partition("=")
            env[name] = value
        if words:
            found.append(Command(line.strip(), env, tuple(words)))
    return found


def page_commands(page: Path = README) -> list[Command]:
    """Every command of every shell block of ``page``."""
    return [command for block in shell_blocks(page.read_text()) for command in commands_in(block)]
