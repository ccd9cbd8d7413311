"""``python -m influencer_stats`` and the ``influencer-stats`` command: the same arguments as ``main.py``."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from influencer_stats.config.cli import describe_profiles, describe_settings, list_choices, parse_command_line
from influencer_stats.config.resolve import ConfigError, resolve_sources


def run(argv: Sequence[str] | None = None, prog: str = "influencer-stats") -> int:
    """Parse ``argv``, then serve, or print what was asked for; 2 on a configuration error."""
    command = parse_command_line(sys.argv[1:] if argv is None else argv, prog)
    if command.action == "list_profiles":
        print(describe_profiles())
        return 0
    if command.action == "list_choices":
        print(list_choices())
        return 0
    try:
        resolved = resolve_sources(os.environ, command.flags)
    except ConfigError as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2
    if command.action == "print_settings":
        print(describe_settings(resolved))
        return 0
    from influencer_stats.servers import serve

    serve(resolved.settings)
    return 0


def main() -> None:
    """The console script's entry point."""
    sys.exit(run())


if __name__ == "__main__":
    sys.exit(run(prog="python -m influencer_stats"))
