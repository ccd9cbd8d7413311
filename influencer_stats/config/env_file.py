"""``--env-file PATH``: ``KEY=VALUE`` lines read into the environment the settings come from.

The format is the common subset of ``.env`` files (Docker's ``--env-file``,
python-dotenv, systemd's ``EnvironmentFile``): one ``KEY=VALUE`` per line,
blank lines and ``#`` comment lines skipped, an optional ``export `` before
the key, a value wrapped in matching single or double quotes taken without
them (no escapes, no ``${…}`` expansion). A variable already set in the
environment wins over the file, as with Docker Compose and python-dotenv:
the file holds defaults for a deployment, the environment overrides them.
A file that cannot be read or a line that is not ``KEY=VALUE`` is a
``ConfigError`` (one line, exit 2).
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from pathlib import Path

from influencer_stats.config.resolve import ConfigError

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def read_env_file(path: str) -> dict[str, str]:
    """The variables the file at ``path`` sets, in order; ``ConfigError`` naming the file and the line."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror.lower() if isinstance(error, OSError) and error.strerror else "not UTF-8 text"
        raise ConfigError(f"--env-file {path[:200]}: {reason}") from None
    found: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, equals, value = stripped.removeprefix("export ").partition("=")
        key, value = key.strip(), value.strip()
        if not equals or not _KEY.fullmatch(key):
            raise ConfigError(f"--env-file {path[:200]}: line {number}: expected KEY=VALUE")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        found[key] = value
    return found


def load_env_file(path: str, environ: MutableMapping[str, str]) -> None:
    """Set in ``environ`` each variable of the file that is not set there already (the environment wins)."""
    for key, value in read_env_file(path).items():
        environ.setdefault(key, value)
