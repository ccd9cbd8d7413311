"""Worker processes tied to the process that started them: they end with it, and it notices one that hangs.

Every server that forks uses this: Granian (its workers, even one) and the ``workers``
slice's supervisor (uvicorn and aiohttp with several workers); it goes with the last of the two
slices (``Slice.shared``).

- **The parent is gone** (``kill -9`` included): a thread in each worker sees
  its parent's pid change, sends SIGTERM to its own process (the server's
  graceful stop: requests in flight get the graceful shutdown) and, if the
  process has not ended within the graceful shutdown plus ``CLEANUP_S``,
  exits at once. Left alone, the workers of a killed Granian went on serving
  the port as children of init, and a restart could not bind it.
- **A worker hangs**: its event loop beats (an empty datagram to the parent
  every ``interval_s``, sent by a loop callback, so a blocked loop or a
  stopped process falls silent), and a thread in the parent (``Watch``) names
  the first worker silent for ``timeout_s`` to its supervisor, which kills it
  and stops the service, as it does when a worker dies. A stopped worker kept
  its share of new connections waiting: about half of them hung.

The parent's socket is in Linux's abstract namespace, named after the address
the service serves, as ``serving.address`` claims it: a worker finds it from
its settings alone, forked (Granian) or spawned, and the kernel tells the
parent each sender's pid (``SO_PASSCRED``), so no other process can beat for
a worker. Elsewhere there is no heartbeat, only the parent watch.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import select
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Collection
from contextlib import suppress
from dataclasses import dataclass
from typing import Final, NoReturn

from influencer_stats.bootstrap.startup import StartupError
from influencer_stats.serving.address import exit_saying
from influencer_stats.settings import Settings

#: After the graceful shutdown, how long a worker may take to close its pools and flush its log.
CLEANUP_S: Final = 5.0
#: How often a worker looks for its parent: how late, at most, it starts stopping once the parent is gone.
PARENT_POLL_S: Final = 0.2
#: How long the parent's watch waits for beats before it judges the silent again.
_WATCH_POLL_S: Final = 0.2
#: Beats the parent reads at once before it judges again (a flood cannot hold the watch).
_MAX_READS: Final = 1024
#: The longest message a worker sends (``Lifeline.failed``); a beat is empty.
_MAX_SAID: Final = 4096
#: Linux's ``struct ucred``: pid, uid, gid.
_CREDENTIALS: Final = struct.Struct("3i")
_HAS_HEARTBEAT: Final = sys.platform == "linux"


@dataclass(frozen=True, slots=True)
class Lifeline:
    """What ties a worker to its parent; parent and worker build the same one from their settings."""

    address: str | None  # the parent's socket in the abstract namespace; None: no heartbeat here
    timeout_s: float
    graceful_s: float

    @classmethod
    def of(cls, settings: Settings) -> Lifeline:
        address = f"\0influencer-stats-lifeline:{settings.host}:{settings.port}" if _HAS_HEARTBEAT else None
        return cls(address, settings.worker_timeout_s, settings.graceful_shutdown_s)

    @property
    def interval_s(self) -> float:
        """How often a worker beats: every second, and at least four times within the timeout."""
        return min(1.0, self.timeout_s / 4)

    def hold(self) -> None:
        """In a worker process: stop once the parent is gone (SIGTERM to this process; a hard exit if
        that has not ended it within the graceful shutdown plus ``CLEANUP_S``).

        Nothing happens in a process that multiprocessing did not start (it has no parent to outlive).
        """
        parent = multiprocessing.parent_process()
        if parent is None or parent.pid is None:
            return
        threading.Thread(
            target=_stop_when_gone,
            args=(parent.pid, self.graceful_s + CLEANUP_S),
            name="parent-watch",
            daemon=True,
        ).start()

    def failed(self, failure: StartupError) -> NoReturn:
        """In a worker whose API cannot open (``serving.server.app_around``): tell the parent (a
        datagram carrying the line and the code, read by its ``Watchdog``), which says it once and
        exits with the code; say it here where there is no heartbeat. Exits at once."""
        if self.address is None:
            exit_saying(failure)
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sender, suppress(OSError):
            sender.sendto(f"{failure.code} {failure}".encode(), self.address)
        os._exit(failure.code)

    def beat_on(self, loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
        """In a worker process, from its event loop's thread: from now on ``loop``, while it runs,
        tells the parent every ``interval_s`` that it does. Returns what stops the beats (a worker
        need not call it: they end with its loop and its process)."""
        if self.address is None:
            return lambda: None
        return _Beats(loop, self.address, self.interval_s).stop


class _Beats:
    """A worker's beats: an empty datagram to the parent every ``interval_s``, sent by its loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, address: str, interval_s: float) -> None:
        self._loop = loop
        self._address = address
        self._interval_s = interval_s
        self._sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._sender.setblocking(False)
        self._next: asyncio.Handle = loop.call_soon(self._beat)

    def _beat(self) -> None:
        # Refused: the parent is gone (the parent watch stops this worker). Full: the next beat.
        with suppress(OSError):
            self._sender.sendto(b"", self._address)
        self._next = self._loop.call_later(self._interval_s, self._beat)

    def stop(self) -> None:
        self._next.cancel()
        self._sender.close()


def _stop_when_gone(parent: int, stop_within_s: float) -> None:
    # A daemon thread: it lasts as long as the worker, and the loop below as long as the parent.
    # A worker's parent is its parent for life: once another process (init, a subreaper) adopts
    # it, the parent has ended.
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os.kill(os.getpid(), signal.SIGTERM)  # the server's own graceful stop, handled on its loop
    time.sleep(stop_within_s)  # the process normally ends before this does
    print(
        f"influencer-stats: error: worker {os.getpid()} did not stop within {stop_within_s:.0f} s "
        "of its parent's end; exiting",
        file=sys.stderr,
        flush=True,
    )
    os._exit(1)


class Heartbeats:
    """The parent's account of its workers' beats, by its own clock (the workers' clocks never count)."""

    def __init__(self, timeout_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._timeout_s = timeout_s
        self._clock = clock
        self._last: dict[int, float] = {}

    def beat(self, pid: int) -> None:
        """``pid`` beat now (or is known to run now: the supervisor heard it listen)."""
        self._last[pid] = self._clock()

    def silent(self, watched: Collection[int]) -> tuple[int, float] | None:
        """A worker of ``watched`` silent for ``timeout_s`` since its last beat, and for how long.

        A watched worker that never beat is not judged (its start is bounded
        elsewhere), and every other pid is forgotten: a worker that has ended,
        or a process that is none of the parent's workers.
        """
        for pid in self._last.keys() - set(watched):
            del self._last[pid]
        now = self._clock()
        for pid, last in self._last.items():
            if now - last >= self._timeout_s:
                return pid, now - last
        return None


class Watchdog:
    """The parent's side: the socket its workers beat to, and their ``Heartbeats``."""

    def __init__(self, heartbeats: Heartbeats, receiver: socket.socket | None) -> None:
        self.heartbeats = heartbeats
        self._receiver = receiver
        #: The first worker's ``Lifeline.failed``: the line saying why, and the exit code.
        self.failure: tuple[str, int] | None = None
        self._reading = threading.Lock()  # the watch's thread and ``failed_to_start`` both read

    @classmethod
    def open(cls, lifeline: Lifeline, clock: Callable[[], float] = time.monotonic) -> Watchdog:
        """Bind the lifeline's socket (where there is one); OSError if another process holds its name."""
        receiver = None
        if lifeline.address is not None:
            receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            try:
                receiver.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
                receiver.bind(lifeline.address)
            except OSError:
                receiver.close()
                raise
            receiver.setblocking(False)
        return cls(Heartbeats(lifeline.timeout_s, clock), receiver)

    def receive(self, wait_s: float) -> None:
        """Note every beat that has come, waiting at most ``wait_s`` for the first."""
        if self._receiver is None:
            time.sleep(wait_s)
            return
        readable, _, _ = select.select([self._receiver], [], [], wait_s)
        if readable:
            with self._reading:
                self._read(self._receiver)

    def _read(self, receiver: socket.socket) -> None:
        for _ in range(_MAX_READS):
            try:
                said, ancillary, _, _ = receiver.recvmsg(_MAX_SAID, socket.CMSG_SPACE(_CREDENTIALS.size))
            except (BlockingIOError, InterruptedError):
                return
            if said and self.failure is None:  # a beat is empty
                code, _, line = said.decode(errors="replace").partition(" ")
                self.failure = (line, int(code) if code.isdigit() else 1)
            for level, kind, data in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    pid, _, _ = _CREDENTIALS.unpack(data[: _CREDENTIALS.size])
                    self.heartbeats.beat(pid)

    def failed_to_start(self) -> tuple[str, int] | None:
        """A worker's ``Lifeline.failed``, read now if it has come (from any thread)."""
        if self._receiver is not None:
            with self._reading:
                self._read(self._receiver)
        return self.failure

    def wake(self) -> None:
        """Make a ``receive`` waiting in another thread return now (a beat of this process's own)."""
        if self._receiver is not None:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as waker, suppress(OSError):
                waker.sendto(b"", self._receiver.getsockname())

    def close(self) -> None:
        if self._receiver is not None:
            self._receiver.close()


def silence(pid: int, seconds: float) -> str:
    """Why a silent worker was killed, as the supervisors say it."""
    return f"worker {pid} stopped answering (its event loop did not beat for {seconds:.1f} s); killed it"


class Watch:
    """A thread that reads the beats and calls ``on_silent(pid, seconds)`` for the first worker of
    ``watched()`` (the pids to judge at that moment) silent too long, then ends; or ends when stopped."""

    def __init__(
        self,
        watchdog: Watchdog,
        watched: Callable[[], Collection[int]],
        on_silent: Callable[[int, float], None],
    ) -> None:
        self._watchdog = watchdog
        self._watched = watched
        self._on_silent = on_silent
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="watchdog", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """End the thread (if it started) before it judges again; the watchdog may be closed after."""
        self._stopped.set()
        if self._thread.is_alive():
            self._watchdog.wake()
            self._thread.join(1.0)

    def _run(self) -> None:
        # Bounded by ``stop``, which the supervisor calls when it stops, and by the first silent worker.
        while not self._stopped.is_set():
            self._watchdog.receive(_WATCH_POLL_S)
            found = self._watchdog.heartbeats.silent(self._watched())
            if found is not None and not self._stopped.is_set():
                self._on_silent(*found)
                return
