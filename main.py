"""Run influencer-stats: ``python main.py [--profile NAME] [--host H] [--port P]``.

``uvicorn main:app`` works too; it reads the settings from the environment.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

from influencer_stats.config import ConfigError, describe_profiles, parse_command_line, resolve


def main(argv: Sequence[str] | None = None) -> int:
    try:
        command = parse_command_line(sys.argv[1:] if argv is None else argv, os.environ)
    except ConfigError as error:
        print(f"main.py: error: {error}", file=sys.stderr)
        return 2
    if command.list_profiles:
        print(describe_profiles())
        return 0
    from influencer_stats.bootstrap import serve

    serve(command.settings)
    return 0


def __getattr__(name: str) -> Any:
    """``main:app`` for ``uvicorn main:app``, built on first access, not at import."""
    if name != "app":
        raise AttributeError(name)
    from influencer_stats.bootstrap import build_asgi_app

    try:
        return build_asgi_app(resolve(None, {}, os.environ))
    except ConfigError as error:
        raise SystemExit(f"main:app: {error}") from None


if __name__ == "__main__":
    sys.exit(main())
