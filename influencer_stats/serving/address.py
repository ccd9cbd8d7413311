"""Where the service listens: one line when it does, one line and exit 1 when it cannot (or cannot start)."""

from __future__ import annotations

import errno
import os
import socket
import sys
from contextlib import suppress
from typing import Final, NoReturn

from influencer_stats.bootstrap.startup import StartupError
from influencer_stats.settings import Settings

#: Errors of a bind that mean "not here": one line and exit 1, not a traceback.
CANNOT_LISTEN: Final = (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES)


def announce(settings: Settings) -> None:
    """The start-up line, printed once the port is bound: the URL, the workers, the profile, every choice."""
    from influencer_stats.bootstrap.slots import SLOTS

    choices = ", ".join(f"{name.replace('_', ' ')} {settings.choices.text(name)}" for name in SLOTS)
    workers = f" with {settings.workers} worker processes" if settings.workers > 1 else ""
    print(
        f"influencer-stats: listening on http://{settings.host}:{settings.port}{workers} "
        f"(profile {settings.profile}: {choices})",
        file=sys.stderr,
        flush=True,
    )


def cannot_listen(host: str, port: int, error: OSError) -> SystemExit:
    """Say why in one line; the caller raises the returned exit (code 1)."""
    reason = os.strerror(error.errno).lower() if error.errno else str(error)
    print(f"influencer-stats: error: cannot listen on {host}:{port}: {reason}", file=sys.stderr)
    return SystemExit(1)


def claim_the_address(host: str, port: int) -> socket.socket | None:
    """Exit 1 with one line when another server has ``host:port``; else a claim to keep while serving.

    Granian, and aiohttp with several workers, bind each worker's socket with
    SO_REUSEPORT (so workers share the port), which lets a second instance bind
    it too: the kernel would split the traffic between two services with
    separate data. A bind without it, as this probe and uvicorn bind, fails
    while anyone listens there. Two instances
    started at once would both pass that probe before either listens, so on
    Linux each first claims the address's name in the abstract socket namespace
    (one per network namespace, as ports are; freed when the process dies).
    """
    claim = None
    try:
        if sys.platform == "linux":
            claim = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            claim.bind(f"\0influencer-stats:{host}:{port}")
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is no obstacle
            probe.bind(address)
    except OSError as error:
        if claim is not None:
            claim.close()
        raise cannot_listen(host, port, error) from None
    return claim


def exit_saying(failure: StartupError) -> NoReturn:
    """One line on stderr (``influencer-stats: error: VARIABLE=value: why``), then exit with its code.

    At once (``os._exit``): from inside a server's lifespan a ``SystemExit`` is caught and
    reported as a crash. The API's resources are closed already; the log is flushed here.
    """
    with suppress(OSError, ValueError):
        sys.stdout.flush()
    print(f"influencer-stats: error: {failure}", file=sys.stderr, flush=True)
    os._exit(failure.code)
