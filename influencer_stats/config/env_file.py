"""``--env-file PATH``: ``KEY=VALUE`` lines read into the environment the settings come from.

Read exactly as ``docker run --env-file`` reads it (docker/cli's
``parseKeyValueFile``), so one file serves both: leading whitespace is
skipped, blank lines and lines starting with ``#`` are comments, a line is
cut at its first ``=`` and the value is everything after it, taken literally
(no quotes removed, no escapes, no ``${…}`` expansion, nothing trimmed), and
a line ``KEY`` alone passes the environment's ``KEY`` through (here it is
already there). Where Docker would read a line otherwise than its writer
meant, it is refused (``ConfigError``, one line naming the line, exit 2):
``export KEY=…`` (an error in Docker), a value in quotes (Docker keeps the
quotes in the value) or ending in whitespace (Docker keeps it), and a key
that is no variable name. A variable already set in the environment wins
over the file (docker's ``-e`` wins over its ``--env-file`` the same way).
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from pathlib import Path

from influencer_stats.config.resolve import ConfigError

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BOM = "\ufeff"


def read_env_file(path: str) -> dict[str, str]:
    """The variables the file at ``path`` sets, in order; ``ConfigError`` naming the file and the line."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror.lower() if isinstance(error, OSError) and error.strerror else "not UTF-8 text"
        raise ConfigError(f"--env-file {path[:200]}: {reason}") from None
    found: dict[str, str] = {}
    # Lines as Go's bufio.Scanner cuts them: at "\n", a "\r" before it dropped.
    for number, raw in enumerate(text.removeprefix(_BOM).split("\n"), start=1):
        line = raw.removesuffix("\r").lstrip()
        if not line or line.startswith("#"):
            continue
        key, equals, value = line.partition("=")
        problem = _refused(key, equals, value)
        if problem is not None:
            raise ConfigError(f"--env-file {path[:200]}: line {number}: {problem}")
        if equals:
            found[key] = value
    return found


def _refused(key: str, equals: str, value: str) -> str | None:
    """Why Docker's ``--env-file`` would refuse the line, or read it otherwise than meant; None if not."""
    if key.startswith("export ") and equals:
        return f"no 'export' before the key (Docker's --env-file refuses it): write {key[7:].strip()}=…"
    if not _KEY.fullmatch(key):
        if equals and _KEY.fullmatch(key.strip()):
            return (
                f"no space before '=' (Docker's --env-file refuses it): write {key.strip()}={value.strip()}"
            )
        return "expected KEY=VALUE"
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return (
            f"{key}'s value is in quotes, which Docker's --env-file keeps in the value: write it without them"
        )
    if value != value.rstrip():
        return f"{key}'s value ends in whitespace, which Docker's --env-file keeps in the value"
    return None


def load_env_file(path: str, environ: MutableMapping[str, str]) -> None:
    """Set in ``environ`` each variable of the file that is not set there already (the environment wins)."""
    for key, value in read_env_file(path).items():
        environ.setdefault(key, value)
