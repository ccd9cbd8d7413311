"""``python -m influencer_stats`` and the ``influencer-stats`` command: the same arguments as ``main.py``."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

#: The exit code when stdout is closed before everything is printed (``… --print-settings | head -1``):
#: 128 + SIGPIPE, what ``cat`` or ``seq`` end with there, without a traceback.
CLOSED_STDOUT = 141
#: The exit code of a Ctrl-C before the service serves: 128 + SIGINT, as a shell reports it.
INTERRUPTED = 130


def run(argv: Sequence[str] | None = None, prog: str = "influencer-stats") -> int:
    """Parse ``argv``, then serve, or print what was asked for; 2 on a configuration error."""
    try:
        try:
            return _run(sys.argv[1:] if argv is None else argv, prog)
        finally:
            sys.stdout.flush()  # a closed stdout shows here, where it is caught, not at exit
    except KeyboardInterrupt:
        # Ctrl-C before the server took the signal over (while importing, resolving): nothing to
        # drain, no traceback. Once it serves, Ctrl-C stops it gracefully and it exits 0.
        return INTERRUPTED
    except BrokenPipeError:
        # Whatever is still buffered goes nowhere, so the interpreter's last flush cannot fail either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return CLOSED_STDOUT


def _run(argv: Sequence[str], prog: str) -> int:
    # Imported here, inside ``run``'s handler of KeyboardInterrupt: a Ctrl-C while they load (the
    # better part of a second) ended in a traceback through every module being imported.
    from influencer_stats.config.cli import (
        describe_profiles,
        describe_settings,
        list_choices,
        parse_command_line,
    )
    from influencer_stats.config.env_file import load_env_file
    from influencer_stats.config.resolve import ConfigError, resolve_sources
    from influencer_stats.config.unknown import warn_unknown_variables

    command = parse_command_line(argv, prog)
    if command.action == "list_profiles":
        print(describe_profiles())
        return 0
    if command.action == "list_choices":
        print(list_choices())
        return 0
    try:
        if command.env_file is not None:
            load_env_file(command.env_file, os.environ)  # worker processes inherit it
        warn_unknown_variables(os.environ)
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
