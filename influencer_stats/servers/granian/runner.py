"""The ``granian`` server's runner: its workers (``settings.workers``, even one) are processes that import the app by name.

So the settings travel through the environment (``serving.environment``): the
parent exported them, and each worker's factory (``worker_app``) resolves the
same settings. Granian forks its workers and watches neither their hangs nor,
from a worker, its own end, so each worker holds a lifeline (``serving.lifeline``):
it stops when this process is gone, and its event loop beats; a thread here
kills a worker that falls silent, and Granian, which respawns none, stops the
others and exits 1, as when a worker dies.
"""

from __future__ import annotations

import asyncio
import logging
import os
import resource
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from influencer_stats.servers.granian.app import app
from influencer_stats.serving.address import announce, cannot_listen, claim_the_address
from influencer_stats.serving.environment import settings_from_environment
from influencer_stats.serving.lifeline import Lifeline, Watch, Watchdog, silence
from influencer_stats.serving.server import app_around
from influencer_stats.settings import Settings

if TYPE_CHECKING:
    from granian.server.common import AbstractServer

#: hyper's smallest read buffer (it refuses anything below 8 KiB).
_MIN_BUFFER_BYTES = 8192
#: Descriptors a worker keeps for itself (listener, logs, pipes, the store) besides its client pools.
_RESERVED_FDS = 256
#: How long workers may take to listen before the start-up line is given up.
_START_TIMEOUT_S = 60.0


def granian_options(settings: Settings) -> dict[str, int | str]:
    """The numbers ``run`` gives Granian, by its flag names (the perf lab's references use them too)."""
    return {
        "workers": settings.workers,
        "task-impl": settings.granian_tasks,
        # One hyper timer bounds both the idle time after an answer and the time to
        # receive the next request's headers (a new connection's too): the smaller bound.
        "header-read-timeout-ms": max(1, round(1000 * min(settings.keepalive_s, settings.header_timeout_s))),
        # The read buffer bounds the request line and headers (431 beyond).
        "max-buffer-size": max(_MIN_BUFFER_BYTES, settings.max_header_bytes),
        "backpressure": connection_limit(settings),
        "backlog": settings.backlog,
        "workers-kill-timeout": int(settings.graceful_shutdown_s),
    }


def run(settings: Settings) -> None:
    from granian import Granian
    from granian.constants import HTTPModes, Interfaces, Loops, TaskImpl
    from granian.http import HTTP1Settings
    from granian.log import LogLevels

    claim = claim_the_address(settings.host, settings.port)  # Granian binds with SO_REUSEPORT
    try:
        watchdog = Watchdog.open(Lifeline.of(settings))
    except OSError as error:  # its name is the address's (see serving.lifeline): held elsewhere
        if claim is not None:
            claim.close()
        raise cannot_listen(settings.host, settings.port, error) from None
    options = granian_options(settings)
    server = Granian(
        "influencer_stats.servers.granian.runner:worker_app",
        factory=True,
        address=settings.host,
        port=settings.port,
        interface=Interfaces.RSGI,
        workers=int(options["workers"]),
        loop=Loops.auto,
        task_impl=TaskImpl(options["task-impl"]),
        # HTTP/1.1 only: with "auto", a connection that sends nothing waits forever to be
        # told HTTP/1 from HTTP/2 (the version sniff has no timeout); this way hyper's
        # header timer runs from the first moment.
        http=HTTPModes.http1,
        http1_settings=HTTP1Settings(
            header_read_timeout=int(options["header-read-timeout-ms"]),
            keep_alive=True,
            max_buffer_size=int(options["max-buffer-size"]),
        ),
        backpressure=int(options["backpressure"]),
        websockets=False,
        backlog=int(options["backlog"]),
        log_level=LogLevels.warning,
        log_access=False,
        workers_kill_timeout=int(options["workers-kill-timeout"]),
    )
    stopped = threading.Event()
    announcer = threading.Thread(
        target=_announce_when_listening, args=(settings, stopped), name="announce", daemon=True
    )
    server.on_startup(announcer.start)  # in this process, before the workers start
    silent: list[str] = []

    def kill_silent(pid: int, seconds: float) -> None:
        # SIGKILL: a stopped process cannot handle SIGTERM. Granian sees the worker die.
        silent.append(silence(pid, seconds))
        os.kill(pid, signal.SIGKILL)

    watching = Watch(watchdog, lambda: _serving_workers(server), kill_silent)
    server.on_startup(watching.start)
    server.on_startup(_stop_on_sighup(server))
    quiet = _QuietWhenSaid(watchdog)
    logging.getLogger("_granian").addFilter(quiet)
    try:
        server.serve()
    except SystemExit as exiting:
        failure = watchdog.failed_to_start()
        if failure is None:
            raise
        # A worker's settings cannot start (Lifeline.failed): its line once, its code.
        print(f"influencer-stats: error: {failure[0]}", file=sys.stderr, flush=True)
        raise SystemExit(failure[1]) from exiting
    finally:
        logging.getLogger("_granian").removeFilter(quiet)
        stopped.set()
        watching.stop()
        if announcer.is_alive():
            announcer.join(1.0)
        watchdog.close()
        if claim is not None:
            claim.close()
        if silent:  # Granian has stopped the others and exits 1 (this runs as its exit passes)
            print(f"influencer-stats: error: {silent[0]}; stopped the others", file=sys.stderr, flush=True)


class _QuietWhenSaid(logging.Filter):
    """Drops Granian's "Unexpected exit from worker-N" when that worker said why (``Lifeline.failed``):
    the runner says it, in one line."""

    def __init__(self, watchdog: Watchdog) -> None:
        super().__init__()
        self._watchdog = watchdog

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith("Unexpected exit from worker"):
            return True
        return self._watchdog.failed_to_start() is None


def _stop_on_sighup(server: AbstractServer[Any]) -> Callable[[], None]:
    """A startup hook: SIGHUP (the terminal hung up) stops Granian as SIGTERM does, instead of
    respawning its workers (Granian's own SIGHUP, set just before the hooks run)."""

    def stop_on_sighup() -> None:
        signal.signal(signal.SIGHUP, server.signal_handler_interrupt)

    return stop_on_sighup


def worker_app() -> Any:
    """The app factory Granian's workers import by name: the API on RSGI, settings from the
    environment, the worker tied to this process by its lifeline (which tells this process
    why, when the API cannot open)."""
    settings = settings_from_environment()
    lifeline = Lifeline.of(settings)
    lifeline.hold()
    return _Beating(app_around(settings, app, lifeline.failed), lifeline)


class _Beating:
    """An RSGI app whose worker's event loop beats once the app has opened in ``__rsgi_init__``.

    Granian calls it with the loop it serves on, before it serves: the first beat goes when
    the loop runs. As with the ``workers`` slice's supervisor, a worker is judged from then on, not while it
    opens its store (which may hold the loop).
    """

    def __init__(self, app: Any, lifeline: Lifeline) -> None:
        self.__rsgi__ = app.__rsgi__  # per request: the app's own method, no call in between
        self._app = app
        self._lifeline = lifeline
        self._stop_beating: Callable[[], None] = lambda: None

    def __rsgi_init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._app.__rsgi_init__(loop)
        self._stop_beating = self._lifeline.beat_on(loop)

    def __rsgi_del__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._app.__rsgi_del__(loop)
        self._stop_beating()


def _serving_workers(server: AbstractServer[Any]) -> list[int]:
    """The pids of the workers Granian serves with and is not stopping: those the watchdog judges."""
    # Granian 2.8's own account: ``wrks``, and ``interrupt_by_parent`` set when it terminates one
    # (at shutdown, on a reload), which then stops beating without being hung.
    pids = (
        getattr(worker.inner, "pid", None) for worker in list(server.wrks) if not worker.interrupt_by_parent
    )
    return [pid for pid in pids if isinstance(pid, int)]


def _announce_when_listening(settings: Settings, stopped: threading.Event) -> None:
    """The start-up line once every worker listens (where that cannot be read: once the port answers).

    Granian's workers bind the port themselves (on Linux each its own socket,
    with SO_REUSEPORT), after every hook of this process has run.
    """
    deadline = time.monotonic() + _START_TIMEOUT_S
    while not stopped.is_set() and time.monotonic() < deadline:
        listening = _listening_sockets(settings.port)
        if _answers(settings.host, settings.port) if listening is None else listening >= settings.workers:
            announce(settings)
            return
        stopped.wait(0.05)


def _listening_sockets(port: int) -> int | None:
    """How many TCP sockets listen on ``port`` (Linux's /proc/net tables), or None without them.

    The address is claimed (``claim_the_address``), so they are this service's.
    """
    count, read = 0, False
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as rows:
                next(rows, None)  # the header
                for row in rows:
                    fields = row.split()
                    # local_address is HEXIP:HEXPORT; state 0A is LISTEN.
                    if (
                        len(fields) > 3
                        and fields[3] == "0A"
                        and int(fields[1].rpartition(":")[2], 16) == port
                    ):
                        count += 1
            read = True
        except OSError:  # no such table (no IPv6), or no /proc at all
            continue
    return count if read else None


def _answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def connection_limit(settings: Settings) -> int:
    """Connections one worker serves at once (Granian's ``backpressure``; more wait to be accepted).

    As many as its open-file limit leaves room for, less what the worker needs for
    itself: the timeouts end slow and idle connections, and a lower cap would let a
    few thousand of them (at most ``INFLUENCER_STATS_BODY_TIMEOUT`` each) shut
    everyone else out, ``/healthz`` included. Below the limit, not at it: at the
    limit ``accept`` fails and Granian retries at once, spinning.
    """
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    files = 1 << 20 if soft == resource.RLIM_INFINITY else soft
    reserved = _RESERVED_FDS + settings.upstream_connections + settings.redis_connections
    return max(1, files - reserved)
