"""What a runner asks of several worker processes: a ``Worker`` in each, ``supervise`` in the parent.

The runners of uvicorn and aiohttp serve in this process with ``--workers 1``; with more they call
``supervise``, which hands them to the supervisor a slice installed (``bootstrap.supervision``:
the ``workers`` slice), or refuses in one line (exit 2) when none is. Each worker runs a
module-level ``target`` of the server's room (spawned processes find it by name) with its
``Worker``: how it tells the parent it listens, that it cannot start, or cannot bind the port.
"""

from __future__ import annotations

import socket
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable
from importlib import import_module
from typing import NoReturn

from influencer_stats.bootstrap.startup import StartupError
from influencer_stats.bootstrap.supervision import SUPERVISION
from influencer_stats.settings import Settings


class Worker(ABC):
    """A worker process's side of its supervision (the supervisor's subclass)."""

    __slots__ = ()

    @abstractmethod
    def listening(self) -> None:
        """Tell the parent this worker listens; from the worker's event loop, which beats from then on."""

    @abstractmethod
    def failed(self, failure: StartupError) -> NoReturn:
        """The API cannot open: tell the parent (which says it once and exits with its code), exit."""

    @abstractmethod
    def cannot_listen(self, error: OSError) -> NoReturn:
        """Tell the parent why the port cannot be bound (it says so, once), and exit 1."""

    @abstractmethod
    def bind(self, host: str, port: int) -> socket.socket:
        """A TCP socket bound to ``host:port`` beside the other workers' (``SO_REUSEPORT``), not listening."""


#: What a worker process runs: a module-level function of the server's room.
Target = Callable[[Worker], None]


def supervise(settings: Settings, target: Target) -> None:
    """Run ``target`` in ``settings.workers`` processes until SIGTERM/SIGINT/SIGHUP, under the
    installed supervisor; without one, one line and exit 2 (nothing was started)."""
    missing = SUPERVISION.missing(settings.workers)
    if missing is not None or SUPERVISION.supervisor is None:
        print(f"influencer-stats: error: {missing}", file=sys.stderr, flush=True)
        raise SystemExit(2)
    import_module(SUPERVISION.supervisor).supervise(settings, target)
