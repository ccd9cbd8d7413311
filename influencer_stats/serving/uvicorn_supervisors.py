"""Ending ``uvicorn --workers N`` and ``uvicorn --reload`` when the app refuses to load.

Under either supervisor the app is imported in a child process, and a child
that exits (code 2 for a refused setting) is only replaced by uvicorn's
``--workers`` supervisor, endlessly ("Child process died"), or mourned by its
reloader, which waits for a file to change. Neither runs any of the service's
code, so the child ends them:

- ``--workers``: the supervisor pings each child over a pipe and unpickles the
  answer; the refusing child answers with one that ends the supervisor with
  the child's code (``os._exit``: at once, without waiting for its other
  children, which refuse the same settings and end themselves), then waits
  for it to go, at most ``WAIT_S`` seconds. This reaches into uvicorn's
  internals (its ``Process`` and the pipe its health check reads), which the
  project already pins to one minor version.
- ``--reload``: the reloader reads nothing from its child, so the child sends
  it SIGTERM; it stops, and uvicorn exits 0 (its reloader ends 0 on SIGTERM
  whatever the child did; only the one-line error says why).

Under either, the child finds what it needs on the stack that is loading the
app (uvicorn's ``Process``, ``Config`` and ``Server``), and only the first of
the children (a name per supervisor in Linux's abstract socket namespace)
prints the refusal, the unknown-variable warnings and, once it listens, the
start-up line ``influencer-stats`` prints (the supervisor's address and
workers): once, not once per worker. uvicorn's supervisor logs its own
"running on" line at INFO before any of the service's code is loaded.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import sys
from dataclasses import dataclass, replace
from types import FrameType
from typing import Any, Final, Literal

from influencer_stats.serving.address import announce
from influencer_stats.settings import Settings

#: How long a refusing worker waits for its supervisor to read the answer and go.
WAIT_S: Final = 10.0
#: The names this process claimed as the first of its siblings (kept until it exits).
_CLAIMED: list[socket.socket] = []


class _Exit:
    """Unpickled by the supervisor: ``os._exit(code)`` there."""

    def __init__(self, code: int) -> None:
        self.code = code

    def __reduce__(self) -> tuple[Any, tuple[int]]:
        return os._exit, (self.code,)


@dataclass(frozen=True, slots=True)
class _Child:
    """This process, as a child of uvicorn's supervisor: which one, its ``Process`` (workers), its
    ``Config``, and the ``Server`` loading the app."""

    kind: Literal["workers", "reload"]
    process: Any
    config: Any
    server: Any


def _uvicorn_child() -> _Child | None:
    """What this process is to uvicorn's ``--workers`` or ``--reload`` supervisor, if it is its child."""
    if multiprocessing.parent_process() is None or "uvicorn._subprocess" not in sys.modules:
        return None
    multiprocess = sys.modules.get("uvicorn.supervisors.multiprocess")
    servers = sys.modules.get("uvicorn.server")
    frame: FrameType | None = sys._getframe(1)
    server = None
    for _ in range(200):  # the import's stack: bounded
        if frame is None:
            break
        owner = frame.f_locals.get("self")
        if servers is not None and isinstance(owner, servers.Server):
            server = server or owner
        if multiprocess is not None and isinstance(owner, multiprocess.Process):
            return _Child("workers", owner, owner.config, server)
        if (frame.f_code.co_name, frame.f_globals.get("__name__")) == (
            "subprocess_started",
            "uvicorn._subprocess",
        ):
            return _Child("reload", None, frame.f_locals.get("config"), server)
        frame = frame.f_back
    return None


def _first(what: str) -> bool:
    """Whether this child is the first of its supervisor's to claim ``what`` (Linux's abstract socket
    namespace; True elsewhere), while the supervisor lives."""
    parent = multiprocessing.parent_process()
    if parent is None or not parent.is_alive():
        return False
    if sys.platform != "linux":
        return True
    claim = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        claim.bind(f"\0influencer-stats-{what}:{parent.pid}")
    except OSError:
        claim.close()
        return False
    _CLAIMED.append(claim)
    return True


def says_why() -> bool:
    """Whether this process should print why it refuses: not when a sibling under the same uvicorn
    supervisor said it already, nor once the supervisor is gone (the user has the prompt back)."""
    return _uvicorn_child() is None or _first("refusal")


def warns() -> bool:
    """Whether this process should print the start-up warnings: once per uvicorn supervisor."""
    return _uvicorn_child() is None or _first("warnings")


def announce_once(settings: Settings) -> None:
    """In one child of uvicorn's supervisor: the start-up line once it listens, with the supervisor's
    address and workers (its ``Server.startup`` wrapped, as ``serving.uvicorn`` subclasses it).

    Nothing elsewhere: a single uvicorn process says it when uvicorn would (``serving.uvicorn``).
    """
    child = _uvicorn_child()
    if child is None or child.server is None or child.config is None or child.config.uds or child.config.fd:
        return
    config, server = child.config, child.server
    workers = config.workers if child.kind == "workers" else 1
    startup = server.startup

    async def startup_then_announce(sockets: Any = None) -> None:
        await startup(sockets=sockets)
        if server.started and _first("announced"):
            announce(replace(settings, host=config.host, port=config.port, workers=workers))

    server.startup = startup_then_announce


def end_the_supervisor(code: int) -> None:
    """In a child of uvicorn's ``--workers`` or ``--reload`` supervisor: make it stop (see the module's doc).

    Returns at once anywhere else; the caller exits with ``code`` afterwards.
    """
    child = _uvicorn_child()
    parent = multiprocessing.parent_process()
    if child is None or parent is None:
        return
    if child.kind == "reload":
        if parent.pid is not None:
            os.kill(parent.pid, signal.SIGTERM)
        return
    try:
        child.process.child_conn.send(_Exit(code))
    except OSError:  # the supervisor is gone already
        return
    parent.join(WAIT_S)
