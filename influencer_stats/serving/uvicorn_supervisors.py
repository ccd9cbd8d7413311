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
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import sys
from types import FrameType
from typing import Any, Final

#: How long a refusing worker waits for its supervisor to read the answer and go.
WAIT_S: Final = 10.0
#: The name this process claimed as the first of its siblings to refuse (kept until it exits).
_CLAIMED: list[socket.socket] = []


class _Exit:
    """Unpickled by the supervisor: ``os._exit(code)`` there."""

    def __init__(self, code: int) -> None:
        self.code = code

    def __reduce__(self) -> tuple[Any, tuple[int]]:
        return os._exit, (self.code,)


def _uvicorn_child() -> tuple[str, Any] | None:
    """("workers", uvicorn's Process) or ("reload", None) when this process is a uvicorn supervisor's child."""
    if multiprocessing.parent_process() is None or "uvicorn._subprocess" not in sys.modules:
        return None
    multiprocess = sys.modules.get("uvicorn.supervisors.multiprocess")
    frame: FrameType | None = sys._getframe(1)
    started = False
    for _ in range(200):  # the import's stack: bounded
        if frame is None:
            break
        owner = frame.f_locals.get("self")
        if multiprocess is not None and isinstance(owner, multiprocess.Process):
            return "workers", owner
        code = frame.f_code.co_name, frame.f_globals.get("__name__")
        started = started or code == ("subprocess_started", "uvicorn._subprocess")
        frame = frame.f_back
    return ("reload", None) if started else None


def says_why() -> bool:
    """Whether this process should print why it refuses: not when a sibling under the same uvicorn
    supervisor said it already, nor once the supervisor is gone (the user has the prompt back).

    The first sibling claims a name in Linux's abstract socket namespace; True anywhere else.
    """
    parent = multiprocessing.parent_process()
    if parent is None or _uvicorn_child() is None:
        return True
    if not parent.is_alive():
        return False
    if sys.platform != "linux":
        return True
    claim = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        claim.bind(f"\0influencer-stats-refusal:{parent.pid}")
    except OSError:
        claim.close()
        return False
    _CLAIMED.append(claim)
    return True


def end_the_supervisor(code: int) -> None:
    """In a child of uvicorn's ``--workers`` or ``--reload`` supervisor: make it stop (see the module's doc).

    Returns at once anywhere else; the caller exits with ``code`` afterwards.
    """
    found = _uvicorn_child()
    if found is None:
        return
    kind, process = found
    parent = multiprocessing.parent_process()
    assert parent is not None
    if kind == "reload":
        if parent.pid is not None:
            os.kill(parent.pid, signal.SIGTERM)
        return
    try:
        process.child_conn.send(_Exit(code))
    except OSError:  # the supervisor is gone already
        return
    parent.join(WAIT_S)
