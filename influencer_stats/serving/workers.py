"""Several worker processes on one port, under a supervising parent (the uvicorn and aiohttp runners).

Each worker is a ``spawn``ed process (a fresh interpreter: nothing of the
parent's state is copied) that resolves its settings from the environment
(``serving.environment``), binds its own socket to the port with
``SO_REUSEPORT`` and serves. The kernel spreads new connections over those
sockets: with one socket shared by every worker, as uvicorn's own
supervisor shares it, the worker that wakes first accepts everything
waiting, and 32 keep-alive connections opened at once all went to one of
two workers.

The parent only supervises: it announces the service once every worker
listens, forwards SIGTERM/SIGINT/SIGHUP as SIGTERM, waits for the workers (at most
the graceful shutdown and ``CLEANUP_S``, then kills them), and exits 1 if a
worker fails to start, dies, stops answering (``serving.lifeline``: its event
loop no longer beats; it is killed) or must be killed: whatever restarts the
service restarts all of it, as with Granian. A worker stops by itself when
its parent is gone (``Lifeline.hold``).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import socket
import sys
import time
from contextlib import suppress
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import Final, NoReturn

from influencer_stats.bootstrap.startup import StartupError
from influencer_stats.serving.address import announce, cannot_listen
from influencer_stats.serving.lifeline import CLEANUP_S, Lifeline, Watch, Watchdog, silence
from influencer_stats.serving.supervised import Target, Worker
from influencer_stats.settings import Settings

#: How long workers may take to listen (imports, opening the store) before the start counts as failed.
_START_TIMEOUT_S: Final = 60.0
_POLL_S: Final = 0.2
_READY: Final = "ready"
#: What stops the service gracefully: SIGTERM, Ctrl-C, the terminal hanging up (forwarded as SIGTERM).
_STOPPING: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: What a terminal sends the whole process group.
_FROM_THE_TERMINAL: Final = (signal.SIGINT, signal.SIGHUP)


class PipedWorker(Worker):
    """A worker process's side of its pipe and its lifeline to the parent."""

    __slots__ = ("_lifeline", "_parent")

    def __init__(self, parent: Connection, lifeline: Lifeline) -> None:
        self._parent = parent
        self._lifeline = lifeline

    def listening(self) -> None:
        """Tell the parent this worker listens; call it from the worker's event loop, which beats from then on."""
        self._parent.send(_READY)
        self._lifeline.beat_on(asyncio.get_running_loop())

    def failed(self, failure: StartupError) -> NoReturn:
        """The API cannot open (``serving.server.app_around``): tell the parent, which says it once
        and exits with its code, and exit at once (a ``SystemExit`` would be reported as a crash)."""
        with suppress(OSError):  # the parent is gone, or stopped reading: it stops anyway
            self._parent.send((str(failure), failure.code))
        os._exit(failure.code)

    def cannot_listen(self, error: OSError) -> NoReturn:
        """Tell the parent why the port cannot be bound (it says so, once), and exit 1."""
        self._parent.send(error.errno)
        raise SystemExit(1)

    def bind(self, host: str, port: int) -> socket.socket:
        """A TCP socket bound to ``host:port`` beside the other workers' (not listening yet)."""
        return reuse_port_socket(host, port)


def reuse_port_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` with ``SO_REUSEPORT``, as each worker binds it (not listening yet)."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(address)
    except OSError:
        sock.close()
        raise
    return sock


class _Workers:
    """The parent's side: start, watch and stop the worker processes."""

    def __init__(self, settings: Settings, target: Target, lifeline: Lifeline, watchdog: Watchdog) -> None:
        self._settings = settings
        self._target = target
        self._lifeline = lifeline
        self._watchdog = watchdog
        self._context = multiprocessing.get_context("spawn")
        self._workers: list[tuple[BaseProcess, Connection]] = []
        self._silent: str | None = None
        self.signals: list[int] = []

    def on_signal(self, sig: int, _: FrameType | None) -> None:
        self.signals.append(sig)

    def start(self) -> None:
        # Each worker starts with Ctrl-C and the hang-up ignored (an ignored signal stays ignored
        # through exec, so Python installs no KeyboardInterrupt): the terminal sends them to the
        # whole process group, and one arriving while a worker imports ended it with a traceback.
        # Its server handles them once it serves; before that, this process stops it.
        ignored = {sig: signal.signal(sig, signal.SIG_IGN) for sig in _FROM_THE_TERMINAL}
        try:
            for number in range(1, self._settings.workers + 1):
                mine, theirs = self._context.Pipe()
                process = self._context.Process(
                    target=_run, args=(self._target, theirs, self._lifeline), name=f"worker-{number}"
                )
                process.start()
                theirs.close()  # the worker's copy is its only one
                self._workers.append((process, mine))
        finally:
            for sig, handler in ignored.items():
                signal.signal(sig, handler)

    def wait_until_listening(self) -> str | None:
        """None once every worker listens (or a signal came); else why the start failed, in a line."""
        waiting = {connection: process for process, connection in self._workers}
        deadline = time.monotonic() + _START_TIMEOUT_S
        while waiting and not self.signals:
            if time.monotonic() > deadline:
                return f"workers did not listen within {_START_TIMEOUT_S:.0f} s"
            for connection in wait(list(waiting), timeout=_POLL_S):
                assert isinstance(connection, Connection)
                process = waiting.pop(connection)
                try:
                    said = connection.recv()
                except EOFError:
                    said = None
                if isinstance(said, int):
                    raise cannot_listen(self._settings.host, self._settings.port, OSError(said, ""))
                if isinstance(said, tuple):  # Worker.failed: the settings cannot start, in any worker
                    line, code = said
                    print(f"influencer-stats: error: {line}", file=sys.stderr, flush=True)
                    raise SystemExit(code)
                if said != _READY:
                    process.join(_POLL_S)
                    return f"worker {process.pid} exited with code {process.exitcode} before it listened"
        return None

    def watch(self) -> str | None:
        """Wait for a signal (None), or a worker's death or silence (why, in a line)."""
        sentinels = {process.sentinel: process for process, _ in self._workers}
        pids = [process.pid for process, _ in self._workers if process.pid is not None]
        for pid in pids:  # each listens, and its loop beats from then on
            self._watchdog.heartbeats.beat(pid)
        watching = Watch(self._watchdog, lambda: pids, self._kill_silent)
        watching.start()
        try:
            while not self.signals:
                for sentinel in wait(list(sentinels), timeout=_POLL_S):
                    assert isinstance(sentinel, int)
                    process = sentinels[sentinel]
                    process.join(_POLL_S)
                    if self.signals:  # a signal to the group: the worker stopped for it, as we do
                        return None
                    return self._silent or f"worker {process.pid} exited with code {process.exitcode}"
            return None
        finally:
            watching.stop()

    def _kill_silent(self, pid: int, seconds: float) -> None:
        # From the watchdog's thread: say why before the kill, which wakes ``watch``. SIGKILL: a
        # stopped process cannot handle SIGTERM, and a blocked loop would not.
        self._silent = silence(pid, seconds)
        os.kill(pid, signal.SIGKILL)

    def stop(self) -> bool:
        """SIGTERM every worker; wait for the graceful shutdown, then kill. Whether none had to be killed."""
        for process, _ in self._workers:
            if process.is_alive():
                process.terminate()
        deadline = time.monotonic() + self._settings.graceful_shutdown_s + CLEANUP_S
        for process, _ in self._workers:
            process.join(max(0.0, deadline - time.monotonic()))
        stopped = True
        for process, connection in self._workers:
            if process.is_alive():
                print(
                    f"influencer-stats: error: worker {process.pid} did not stop in time; killed",
                    file=sys.stderr,
                )
                process.kill()
                process.join(CLEANUP_S)
                stopped = False
            connection.close()
        return stopped


def _run(target: Target, parent: Connection, lifeline: Lifeline) -> None:
    lifeline.hold()
    target(PipedWorker(parent, lifeline))


def supervise(settings: Settings, target: Target) -> None:
    """Run ``target`` (a module-level function) in ``settings.workers`` processes until SIGTERM/SIGINT/SIGHUP."""
    lifeline = Lifeline.of(settings)
    try:
        watchdog = Watchdog.open(lifeline)
    except OSError as error:  # its name is the address's (see serving.lifeline): held elsewhere
        raise cannot_listen(settings.host, settings.port, error) from None
    workers = _Workers(settings, target, lifeline, watchdog)
    previous = {sig: signal.signal(sig, workers.on_signal) for sig in _STOPPING}
    failure: str | None = None
    try:
        workers.start()
        failure = workers.wait_until_listening()
        if failure is None and not workers.signals:
            announce(settings)
            failure = workers.watch()
    finally:
        stopped = workers.stop()
        watchdog.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if failure is not None:
        print(f"influencer-stats: error: {failure}; stopped the others", file=sys.stderr)
        raise SystemExit(1)
    if not stopped:
        raise SystemExit(1)
